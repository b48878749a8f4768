//! An arm of your own, driven by hand: the protocol without the dataflow. An [`ArmSpec`] says
//! how an item becomes requests (here Serial over the union of the candidates' next
//! characters, filled without a call where only one character is possible, with prompt
//! variant v2); its controller emits one request per position, each answer moves it on, and
//! the finished trajectory is what the pipeline would write to `trajectories/`.
//!
//! ```sh
//! cargo run --release --example custom_arm
//! ```
//!
//! The engine here is the seeded test double; any `c2s_model::Engine` (the prefix engine on a
//! GGUF file, mistral.rs, a served model) answers the same requests.

use std::path::Path;

use c2s_model::{InferenceService, ServiceConfig, SimulatedEngine};
use c2s_protocol::{Controller, ControllerConfig};
use c2s_records::{Arm, ArmSpec, ItemPolicy, PromptVariant, Support};

fn main() -> anyhow::Result<()> {
    let bank = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/banks/arithmetic-dev.jsonl");
    let items = c2s_banks::bank::read_bank(&bank, &ItemPolicy::default())?;
    let item = items
        .first()
        .ok_or_else(|| anyhow::anyhow!("an empty bank"))?;
    let mut spec = ArmSpec::new(Arm::Serial).with_support(Support::UNION_FILL);
    spec.variant = PromptVariant::V2;
    println!(
        "item {}: {} (gold {})",
        item.item_id, item.problem, item.target
    );
    println!("arm {}", spec.label());

    let service = InferenceService::start(
        Box::new(SimulatedEngine::new(20261005)),
        ServiceConfig::default(),
    );
    let runtime = tokio::runtime::Runtime::new()?;
    let mut controller = Controller::new(item, spec, None, &ControllerConfig::default())?;
    let mut pending = controller.start()?;
    while let Some(request) = pending.pop() {
        let options: Vec<&str> = request.options.iter().map(|o| o.code.as_str()).collect();
        let response = runtime.block_on(service.call(request.clone()))?;
        println!("  step {}: options {options:?}", request.step);
        pending.extend(controller.on_response(&response)?);
    }
    let trajectory = controller
        .trajectory(&service.identity().label())
        .ok_or_else(|| anyhow::anyhow!("the controller did not finish"))?;
    println!(
        "output {:?}: correct {}, {} steps (a fill without a call is a step too)",
        trajectory.output,
        trajectory.correct,
        trajectory.steps.len()
    );
    Ok(())
}
