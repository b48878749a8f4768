//! A memory budget for chat templates. A chat template is code shipped inside a model file,
//! and Jinja can grow a string or a list exponentially in a few instructions
//! (`{% set ns.s = ns.s ~ ns.s %}` in a loop), which no instruction budget (minijinja's fuel)
//! stops and no minijinja setting bounds; minijinja also folds constant expressions while it
//! compiles (`'a' * 10 * 10 * …`), where no fuel applies. So the bytes that compiling a
//! template and each render allocate are counted on their thread by a global allocator,
//! [`RenderBudgetAlloc`], which the `choice2seq` binary installs: a compile or render that
//! allocates more than its budget stops the process with exit status 2 and a message naming
//! the chat template (a render cannot be interrupted from outside, and an allocation cannot
//! fail without aborting). The pipeline compiles the template and renders every message shape
//! of a run before any work, so such a template stops a run there.
//!
//! Without the allocator installed (a library user) nothing is counted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// What is being budgeted on a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Budgeted {
    Compiling,
    Rendering,
}

/// The budget running on a thread.
#[derive(Debug, Clone, Copy)]
struct Running {
    what: Budgeted,
    used: usize,
    budget: usize,
}

thread_local! {
    /// The compile or render running on this thread; None outside them. Const-initialized and
    /// without a destructor, so the allocator can read it without allocating.
    static RUNNING: Cell<Option<Running>> = const { Cell::new(None) };
    /// The bytes the last compile or render on this thread allocated.
    static LAST: Cell<usize> = const { Cell::new(0) };
}

/// The bytes the last chat-template compile or render on this thread allocated (0 without
/// [`RenderBudgetAlloc`] installed): the tests' measure of the budget's margin.
pub fn last_allocated() -> usize {
    LAST.with(Cell::get)
}

/// A global allocator that counts the bytes each chat-template compile and render allocates
/// (gross: every allocation and growth, so copying churn counts too) against its budget.
/// Wraps `A` (the system allocator by default).
pub struct RenderBudgetAlloc<A = System>(pub A);

impl RenderBudgetAlloc<System> {
    pub const fn system() -> Self {
        RenderBudgetAlloc(System)
    }
}

/// Count `bytes` against the running budget, if any.
fn charge(bytes: usize) {
    // `try_with`: the thread-local may be gone while the thread exits.
    let _ = RUNNING.try_with(|running| {
        if let Some(mut r) = running.get() {
            r.used = r.used.saturating_add(bytes);
            if r.used > r.budget {
                // Off first, so that the message's own allocations pass.
                running.set(None);
                exceeded(r);
            }
            running.set(Some(r));
        }
    });
}

#[cold]
fn exceeded(r: Running) -> ! {
    use std::io::Write;
    let doing = match r.what {
        Budgeted::Compiling => "compiling it",
        Budgeted::Rendering => "rendering one prompt",
    };
    let _ = writeln!(
        std::io::stderr(),
        "error: model: the chat template allocated more than {} MiB {doing} (a template that \
         grows a string or a list without bound); stopping",
        r.budget >> 20
    );
    std::process::exit(2)
}

// SAFETY: every call is forwarded to `A` unchanged; counting touches only a const-initialized
// thread-local without a destructor, and the exit path writes to stderr with counting off.
unsafe impl<A: GlobalAlloc> GlobalAlloc for RenderBudgetAlloc<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        charge(layout.size());
        self.0.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        charge(layout.size());
        self.0.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.0.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        charge(new_size.saturating_sub(layout.size()));
        self.0.realloc(ptr, layout, new_size)
    }
}

/// The budget of the compile or render running on this thread, from start to drop.
pub(crate) struct RenderBudget {
    previous: Option<Running>,
}

impl RenderBudget {
    pub(crate) fn start(what: Budgeted, budget: usize) -> RenderBudget {
        let previous = RUNNING.with(|r| {
            r.replace(Some(Running {
                what,
                used: 0,
                budget,
            }))
        });
        RenderBudget { previous }
    }
}

impl Drop for RenderBudget {
    fn drop(&mut self) {
        let used = RUNNING
            .with(|r| r.replace(self.previous))
            .map_or(0, |r| r.used);
        LAST.with(|l| l.set(used));
    }
}
