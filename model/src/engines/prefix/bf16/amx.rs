//! The AMX family of the bf16 products: `tdpbf16ps` on tiles (Intel Sapphire Rapids and later).
//!
//! **Blocking.** Eight tile registers hold a 32 × 32 block of the output: four accumulators
//! (two row halves × the panel's two 16-column halves), two activation tiles (16 rows × 32
//! depth values each) and the panel's two weight tiles (16 depth pairs × 16 columns, read from
//! the packed panel at a stride of 128 bytes: `super`'s layout is already AMX's pair layout).
//! Each step of 32 depth values loads four tiles and issues four products; a block's
//! accumulators start at zero and go to the output once, directly when the block is whole and
//! the product is not accumulating, else through a scratch block.
//!
//! **Activations.** Rounded to bf16 as in the other families and laid out tile by tile (16
//! rows × 32 values contiguous per step, so a tile load reads 1 KiB in order; with row-major
//! activations the strided loads ran a third slower, measured), zero-padded to whole steps.
//!
//! **Threads.** Panels are shared out among the rayon threads, as in the other families. Each
//! task loads its tile configuration (per-thread state) first and releases the tiles at its
//! end, so a thread holds no tile state between products.
//!
//! **Grant.** Linux hands a process the 8 KiB tile state only on request
//! (`arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)`); [`is_available`] asks once per
//! process, after CPUID reports AMX-TILE and AMX-BF16. Without the grant a tile instruction
//! faults, so the family is unavailable where the request fails (other kernels, VMs that hide
//! the state).

use super::{zeroed_lines, Bf16Matrix, InputRows, Lines, SharedOut, PANEL, STEP_PAIRS};

#[cfg(target_arch = "x86_64")]
pub(super) mod attention;

/// Rows of a block: two tiles of 16.
const BLOCK_ROWS: usize = 32;
/// Rows of one tile.
pub(super) const TILE_ROWS: usize = 16;

/// Whether this CPU has AMX-TILE and AMX-BF16 and the OS granted this process the tile state
/// (asked once per process).
pub(super) fn is_available() -> bool {
    static GRANTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *GRANTED.get_or_init(tiles::request)
}

/// What an AMX product reads: rows it rounds into tile order first, or rows already in it.
pub(super) enum TileInput<'a> {
    /// `m` rows of the weight's depth, given or computed.
    Rows(InputRows<'a>),
    /// Rows in tile order (a [`super::TiledRows`]'s).
    Tiled(&'a [u16]),
}

/// Where an AMX product's blocks go.
pub(super) enum TileOutput<'a> {
    /// `out (m × n) = [out +] x · W`.
    Store {
        out: &'a mut [f32],
        accumulate: bool,
    },
    /// Each block's SiLU(gate) · up values (the weight's columns interleaved by 16, `W` being
    /// `2·ffn` wide), rounded to bf16 into `act`: `m` tile-ordered rows of `ffn` values.
    GatedSilu { act: &'a mut [u16], ffn: usize },
}

/// `input · W` on AMX tiles, to `output`. The caller checked the shapes and that the family is
/// available.
pub(super) fn product(w: &Bf16Matrix, input: TileInput<'_>, m: usize, output: TileOutput<'_>) {
    #[cfg(target_arch = "x86_64")]
    {
        assert!(
            is_available(),
            "bf16 product: AMX kernels on a CPU without them"
        );
        let epilogue = match output {
            TileOutput::Store { out, accumulate } => {
                assert_eq!(out.len(), m * w.cols, "bf16 product: output shape");
                tiles::Epilogue::Store {
                    out: SharedOut(out.as_mut_ptr()),
                    accumulate,
                }
            }
            TileOutput::GatedSilu { act, ffn } => tiles::Epilogue::gated(act, ffn),
        };
        match input {
            TileInput::Rows(x) => with_tile_activations(x, m, w.rows, w.padded_pairs(), |xa| {
                tiles::run(w, xa, m, epilogue)
            }),
            TileInput::Tiled(xa) => tiles::run(w, xa, m, epilogue),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (w, input, m, output);
        unreachable!("AMX is an x86-64 family");
    }
}

thread_local! {
    /// The tile-ordered activations of this thread's last product, kept for its next: zeroed
    /// only when it grows, then each product overwrites its rows and clears its padding (a
    /// zeroed buffer per product was a twentieth of a bf16 prefill in `memset`).
    static ACTIVATIONS: std::cell::RefCell<Lines> = std::cell::RefCell::new(zeroed_lines(0));
}

/// `f` of `x`'s `m` rows of `k` values rounded to bf16 in tile order: for each block of 16
/// rows, for each step of [`STEP_PAIRS`] pairs, its 16 rows of 32 values; rows past `m` and
/// depth past `k` are zeros. The blocks are filled in parallel (a computed row in the filling
/// thread), into this thread's reused buffer (a fresh one if it is in use).
fn with_tile_activations<R>(
    x: InputRows<'_>,
    m: usize,
    k: usize,
    padded_pairs: usize,
    f: impl FnOnce(&[u16]) -> R,
) -> R {
    use rayon::prelude::*;
    let block_len = tile_block_len(padded_pairs);
    let len = m.div_ceil(TILE_ROWS) * block_len;
    let fill = |lines: &mut [u16]| {
        lines
            .par_chunks_mut(block_len)
            .enumerate()
            .for_each(|(b, block)| {
                let first = b * TILE_ROWS;
                tile_block(x, first..m.min(first + TILE_ROWS), k, block)
            });
    };
    ACTIVATIONS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut lines) => {
            if lines.len() < len {
                *lines = zeroed_lines(len);
            }
            let lines = &mut lines.as_mut_slice()[..len];
            fill(lines);
            f(lines)
        }
        Err(_) => {
            let mut lines = zeroed_lines(len);
            fill(lines.as_mut_slice());
            f(lines.as_slice())
        }
    })
}

/// `u16`s of one 16-row block of tile-ordered activations of `padded_pairs` pairs.
pub(super) fn tile_block_len(padded_pairs: usize) -> usize {
    padded_pairs / STEP_PAIRS * TILE_ROWS * STEP_PAIRS * 2
}

/// Rows `rows` (at most 16) of `x`, `k` values each, rounded into one block of tile order; the
/// rest of the block (depth past `k`, rows past the last) set to zero, whatever it held. A
/// computed row is made in one buffer for the block, which stays in the L1 cache.
fn tile_block(x: InputRows<'_>, rows: std::ops::Range<usize>, k: usize, block: &mut [u16]) {
    let row_len = STEP_PAIRS * 2;
    let step_len = TILE_ROWS * row_len;
    let steps = block.len() / step_len;
    let mut computed = match x {
        InputRows::Given(_) => Vec::new(),
        InputRows::Computed(_) => vec![0f32; k],
    };
    for r in 0..TILE_ROWS {
        let dst = &mut block[r * row_len..];
        let i = rows.start + r;
        let depth = match x {
            _ if i >= rows.end => 0,
            InputRows::Given(x) => {
                super::round_chunks_into(&x[i * k..(i + 1) * k], row_len, dst, step_len);
                k
            }
            InputRows::Computed(row) => {
                row(i, &mut computed);
                super::round_chunks_into(&computed, row_len, dst, step_len);
                k
            }
        };
        // Zeros from `depth` on: the last partial step's tail, then whole steps.
        for s in depth / row_len..steps {
            let from = if s == depth / row_len {
                depth % row_len
            } else {
                0
            };
            dst[s * step_len + from..s * step_len + row_len].fill(0);
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod tiles {
    pub(super) fn request() -> bool {
        false
    }
}

#[cfg(target_arch = "x86_64")]
mod tiles {
    use super::{Bf16Matrix, SharedOut, BLOCK_ROWS, PANEL, STEP_PAIRS, TILE_ROWS};
    use rayon::prelude::*;
    use std::arch::asm;

    /// `ARCH_REQ_XCOMP_PERM` of Linux's `arch_prctl` (asm/prctl.h).
    #[cfg(target_os = "linux")]
    const ARCH_REQ_XCOMP_PERM: libc::c_ulong = 0x1023;
    /// The XSAVE component of the tile data (the 8 KiB of tmm0–7).
    #[cfg(target_os = "linux")]
    const XFEATURE_XTILEDATA: libc::c_ulong = 18;

    /// CPUID's AMX-TILE and AMX-BF16, then the kernel's grant of the tile state.
    pub(super) fn request() -> bool {
        use std::arch::x86_64::{__cpuid, __cpuid_count};
        #[allow(unused_unsafe)]
        // SAFETY: CPUID exists on every x86-64 CPU; leaf 7 is read only when the CPU has it.
        let has_amx = unsafe {
            __cpuid(0).eax >= 7 && {
                let edx = __cpuid_count(7, 0).edx;
                edx & (1 << 24) != 0 && edx & (1 << 22) != 0
            }
        };
        has_amx && grant()
    }

    /// Linux's grant of the tile state to this process.
    #[cfg(target_os = "linux")]
    fn grant() -> bool {
        // SAFETY: a plain system call with integer arguments; it changes only which XSAVE
        // components this process may use.
        unsafe {
            libc::syscall(
                libc::SYS_arch_prctl,
                ARCH_REQ_XCOMP_PERM,
                XFEATURE_XTILEDATA,
            ) == 0
        }
    }

    /// Other systems grant the state differently (or not): not tried.
    #[cfg(not(target_os = "linux"))]
    fn grant() -> bool {
        false
    }

    /// A tile configuration (palette 1): bytes per row and rows of each of the 16 tiles.
    #[repr(C, align(64))]
    pub(super) struct TileConfig {
        palette: u8,
        start_row: u8,
        reserved: [u8; 14],
        colsb: [u16; 16],
        rows: [u8; 16],
    }

    impl TileConfig {
        /// tmm0/1: the accumulators of the first `top` rows (left and right 16 columns);
        /// tmm2/3: those of the next `bottom` rows; tmm4/5: the two activation tiles; tmm6/7:
        /// the panel's two weight tiles. A tile of no rows is left unconfigured (not used).
        pub(super) fn for_rows(rows: usize) -> TileConfig {
            let top = rows.min(TILE_ROWS) as u8;
            let bottom = rows.saturating_sub(TILE_ROWS) as u8;
            let mut config = TileConfig {
                palette: 1,
                start_row: 0,
                reserved: [0; 14],
                colsb: [0; 16],
                rows: [0; 16],
            };
            for (tile, rows) in [top, top, bottom, bottom, top, bottom, 16, 16]
                .into_iter()
                .enumerate()
            {
                if rows > 0 {
                    config.rows[tile] = rows;
                    config.colsb[tile] = 64;
                }
            }
            config
        }

        /// Load this configuration into the calling thread's tile state.
        ///
        /// # Safety
        /// The process holds the tile grant ([`request`] returned true).
        pub(super) unsafe fn load(&self) {
            asm!("ldtilecfg [{}]", in(reg) self as *const TileConfig, options(nostack, readonly));
        }
    }

    /// Release the calling thread's tile state.
    ///
    /// # Safety
    /// The process holds the tile grant.
    pub(super) unsafe fn release() {
        asm!("tilerelease", options(nostack, nomem));
    }

    /// One block: `c[r][0..32] = Σ` over `steps` steps of the activation tiles at `a` (16-row
    /// tiles of 1 KiB; the second row half `half` bytes after the first) times the panel at
    /// `b` (its 32 columns' pairs, one pair row every `b_row` bytes: 128 in a packed panel),
    /// for `two` row halves; `c` has a row stride of `c_stride` bytes.
    ///
    /// # Safety
    /// The tile configuration for this block's rows is loaded; `a`, `b` hold `steps` steps
    /// (and `a + half` too when `two`); `c` has room for the block's rows × 32 f32 at its stride.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn block(
        a: *const u8,
        half: usize,
        b: *const u8,
        b_row: usize,
        steps: usize,
        c: *mut u8,
        c_stride: usize,
        two: bool,
    ) {
        const A_STEP: usize = TILE_ROWS * STEP_PAIRS * 4;
        let b_step = STEP_PAIRS * b_row;
        asm!("tilezero tmm0", "tilezero tmm1", options(nostack, nomem));
        if two {
            asm!("tilezero tmm2", "tilezero tmm3", options(nostack, nomem));
        }
        for s in 0..steps {
            let (a0, b0) = (a.add(s * A_STEP), b.add(s * b_step));
            // The first row half against both weight tiles…
            asm!(
                "tileloadd tmm4, [{a0} + {a_stride}*1]",
                "tileloadd tmm6, [{b0} + {b_stride}*1]",
                "tileloadd tmm7, [{b1} + {b_stride}*1]",
                "tdpbf16ps tmm0, tmm4, tmm6",
                "tdpbf16ps tmm1, tmm4, tmm7",
                a0 = in(reg) a0,
                a_stride = in(reg) 64usize,
                b0 = in(reg) b0,
                b1 = in(reg) b0.add(64),
                b_stride = in(reg) b_row,
                options(nostack, readonly),
            );
            // …then the second, reusing the weight tiles just loaded.
            if two {
                asm!(
                    "tileloadd tmm5, [{a1} + {a_stride}*1]",
                    "tdpbf16ps tmm2, tmm5, tmm6",
                    "tdpbf16ps tmm3, tmm5, tmm7",
                    a1 = in(reg) a0.add(half),
                    a_stride = in(reg) 64usize,
                    options(nostack, readonly),
                );
            }
        }
        asm!(
            "tilestored [{c0} + {stride}*1], tmm0",
            "tilestored [{c1} + {stride}*1], tmm1",
            c0 = in(reg) c,
            c1 = in(reg) c.add(64),
            stride = in(reg) c_stride,
            options(nostack),
        );
        if two {
            let c = c.add(TILE_ROWS * c_stride);
            asm!(
                "tilestored [{c0} + {stride}*1], tmm2",
                "tilestored [{c1} + {stride}*1], tmm3",
                c0 = in(reg) c,
                c1 = in(reg) c.add(64),
                stride = in(reg) c_stride,
                options(nostack),
            );
        }
    }

    /// Bytes of activations a row chunk of a product holds at most: three quarters of a 2 MiB
    /// L2 cache (Sapphire Rapids'), leaving room for the panel and the output.
    const CHUNK_BYTES: usize = 1536 << 10;

    /// Rows of one chunk of `m` rows, a whole number of blocks, for `tile_bytes` bytes per
    /// 16-row tile: as few chunks as hold at most [`CHUNK_BYTES`] each.
    fn chunk_rows(m: usize, tile_bytes: usize) -> usize {
        let chunks = (m.div_ceil(TILE_ROWS) * tile_bytes)
            .div_ceil(CHUNK_BYTES)
            .max(1);
        m.div_ceil(chunks).div_ceil(BLOCK_ROWS) * BLOCK_ROWS
    }

    /// Bytes of one pair row of a packed panel: 32 columns of two bf16.
    pub(super) const PANEL_ROW: usize = PANEL * 4;

    /// A 32 × 32 f32 block on a cache line (tile stores of whole lines).
    #[repr(C, align(64))]
    pub(super) struct Scratch([[f32; PANEL]; BLOCK_ROWS]);

    /// Where a product's blocks go.
    pub(super) enum Epilogue {
        /// Into the `m × n` f32 output, added to it when `accumulate`.
        Store { out: SharedOut, accumulate: bool },
        /// Each panel's 16 SiLU(gate) · up values of each row (`GateUp::Interleaved`'s
        /// columns), rounded to bf16 into `act`: tile-ordered rows of `ffn` values.
        GatedSilu { act: SharedAct, ffn: usize },
    }

    impl Epilogue {
        pub(super) fn gated(act: &mut [u16], ffn: usize) -> Epilogue {
            Epilogue::GatedSilu {
                act: SharedAct(act.as_mut_ptr(), act.len()),
                ffn,
            }
        }
    }

    /// The tile-ordered SiLU values, shared by the panel threads (which write disjoint
    /// columns): pointer and length.
    #[derive(Clone, Copy)]
    pub(super) struct SharedAct(*mut u16, usize);
    // SAFETY: the threads write disjoint elements (see `run`).
    unsafe impl Send for SharedAct {}
    unsafe impl Sync for SharedAct {}

    /// The product of the tile-ordered activations `xa` (`m` rows) and `w`, each block to
    /// `epilogue`.
    pub(super) fn run(w: &Bf16Matrix, xa: &[u16], m: usize, epilogue: Epilogue) {
        let (n, steps) = (w.cols, w.padded_pairs() / STEP_PAIRS);
        let half = steps * TILE_ROWS * STEP_PAIRS * 4;
        let panel_len = w.panel_len();
        // Work items are (row chunk, panel), chunk-major: a thread takes a run of items and
        // passes every panel over one chunk of activations while it stays in its L2 cache
        // (with whole-height panels, each panel streamed all the activations again).
        let chunk_rows = chunk_rows(m, half);
        let panels = n.div_ceil(PANEL);
        (0..m.div_ceil(chunk_rows) * panels)
            .into_par_iter()
            .for_each(|item| {
                let (chunk, panel) = (item / panels, item % panels);
                let weights = &w.data.as_slice()[panel * panel_len..(panel + 1) * panel_len];
                let cols = PANEL.min(n - panel * PANEL);
                let mut scratch = Scratch([[0.0; PANEL]; BLOCK_ROWS]);
                let mut loaded = 0;
                let chunk_end = m.min((chunk + 1) * chunk_rows);
                for r0 in (chunk * chunk_rows..chunk_end).step_by(BLOCK_ROWS) {
                    let rows = BLOCK_ROWS.min(m - r0);
                    // SAFETY: `product` runs only where `is_available` (the grant); the
                    // configuration is for `rows`; the activations hold ⌈m/16⌉ blocks of `steps`
                    // steps (the second half exists when `rows > 16`), the panel `steps` steps;
                    // the direct store writes rows `r0..r0+32`, columns of this panel only, all
                    // inside `out` (m × n), and no other thread writes this panel's columns.
                    unsafe {
                        if rows != loaded {
                            TileConfig::for_rows(rows).load();
                            loaded = rows;
                        }
                        let a = xa.as_ptr().add(r0 / TILE_ROWS * half / 2).cast();
                        let b = weights.as_ptr().cast();
                        if let Epilogue::Store {
                            out,
                            accumulate: false,
                        } = epilogue
                        {
                            if rows == BLOCK_ROWS && cols == PANEL {
                                let c = out.get().add(r0 * n + panel * PANEL).cast();
                                block(a, half, b, PANEL_ROW, steps, c, n * 4, true);
                                continue;
                            }
                        }
                        let c = scratch.0.as_mut_ptr().cast();
                        block(a, half, b, PANEL_ROW, steps, c, PANEL * 4, rows > TILE_ROWS);
                    }
                    match epilogue {
                        Epilogue::Store { out, accumulate } => {
                            for (r, t) in scratch.0.iter().enumerate().take(rows) {
                                // SAFETY: row `r0 + r < m`, this panel's `cols` columns (see
                                // above).
                                let dst = unsafe {
                                    std::slice::from_raw_parts_mut(
                                        out.get().add((r0 + r) * n + panel * PANEL),
                                        cols,
                                    )
                                };
                                if accumulate {
                                    for (d, v) in dst.iter_mut().zip(t) {
                                        *d += v;
                                    }
                                } else {
                                    dst.copy_from_slice(&t[..cols]);
                                }
                            }
                        }
                        Epilogue::GatedSilu { act, ffn } => {
                            let mut values = [[0u16; 16]; BLOCK_ROWS];
                            super::super::gated_silu_block(&scratch.0[..rows], &mut values);
                            // This panel's 16 columns `16·panel..`: step `panel / 2`, places
                            // `16·(panel % 2)..` of each row of the step's tile.
                            let block_len = super::tile_block_len(ffn / 2);
                            let (step, place) = (panel / 2, panel % 2 * 16);
                            for (r, v) in values.iter().enumerate().take(rows) {
                                let row = r0 + r;
                                let at = row / TILE_ROWS * block_len
                                    + step * TILE_ROWS * PANEL
                                    + row % TILE_ROWS * PANEL
                                    + place;
                                assert!(at + 16 <= act.1, "gated values inside their rows");
                                // SAFETY: inside `act` (asserted); row `row`'s places of this
                                // panel's columns, which no other thread writes.
                                unsafe {
                                    std::ptr::copy_nonoverlapping(v.as_ptr(), act.0.add(at), 16)
                                };
                            }
                        }
                    }
                }
                // SAFETY: the grant is held (as above).
                unsafe { release() };
            });
    }
}
