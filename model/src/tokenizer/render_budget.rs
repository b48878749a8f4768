//! A memory budget for chat templates. A chat template is code shipped inside a model file,
//! and Jinja can grow a string or a list exponentially in a few instructions
//! (`{% set ns.s = ns.s ~ ns.s %}` in a loop), which no instruction budget (minijinja's fuel)
//! stops and no minijinja setting bounds; minijinja also folds constant expressions while it
//! compiles (`'a' * 10 * 10 * …`), where no fuel applies. So the bytes that compiling a
//! template and each render allocate are counted on their thread by a global allocator,
//! [`RenderBudgetAlloc`], which the `choice2seq` binary installs: a compile or render that
//! allocates more than its budget stops the process with exit status 2 and a message naming
//! the chat template (a render cannot be interrupted from outside, and an allocation cannot
//! fail without aborting). The message is formatted on the stack and written to fd 2 with
//! `write(2)` before `_exit(2)` ([`write_stderr`]): nothing on that path allocates, buffers or
//! waits for std's stderr lock, so a process that exits 2 always says why. The pipeline compiles the template and renders every message shape
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
    /// The counter over the system allocator, for `#[global_allocator]` statics (a `const`
    /// constructor).
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
    use std::fmt::Write;
    let doing = match r.what {
        Budgeted::Compiling => "compiling it",
        Budgeted::Rendering => "rendering one prompt",
    };
    // Formatted on the stack: this runs inside an allocation.
    let mut message = StackText::<320>::new();
    let _ = writeln!(
        message,
        "error: model: the chat template allocated more than {} MiB {doing} (a template that \
         grows a string or a list without bound); stopping",
        r.budget >> 20
    );
    write_stderr(message.as_bytes());
    // `_exit`, not `exit`: the message is out, and what `exit` would run (atexit handlers,
    // this thread's thread-local destructors) runs inside whatever code was allocating, perhaps
    // holding the locks it needs; it could only hang or crash the exit and change its status.
    // The pipeline has written nothing to stdout yet when templates are checked (before any
    // work), and its Parquet parts are renamed into place only once complete.
    // SAFETY: `_exit` has no preconditions; it ends the process.
    unsafe { libc::_exit(2) }
}

/// Write `bytes` to file descriptor 2 with `write(2)` itself: no allocation, no buffer to
/// flush, and not through std's `Stderr`, whose lock another thread (a progress bar writing to
/// a terminal that is not read) may hold, or this thread may hold in the middle of a write.
/// Partial writes continue, interrupted ones are retried, and a non-blocking descriptor that
/// is full is waited on (up to about 10 s). For messages written just before the process
/// ends, which must not be lost.
pub fn write_stderr(bytes: &[u8]) {
    let mut rest = bytes;
    let mut waits = 0;
    while !rest.is_empty() {
        // SAFETY: `rest` is a valid slice for its length; fd 2 being closed is an error return.
        let n = unsafe { libc::write(2, rest.as_ptr().cast(), rest.len()) };
        if n > 0 {
            rest = &rest[(n as usize).min(rest.len())..];
            continue;
        }
        let errno = std::io::Error::last_os_error().raw_os_error();
        match errno {
            Some(libc::EINTR) if n < 0 => {}
            Some(libc::EAGAIN) if n < 0 && waits < 10_000 => {
                waits += 1;
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            _ => return,
        }
    }
}

/// Text formatted into a fixed buffer on the stack (cut at its capacity, on a character
/// boundary), for messages written where nothing may allocate.
pub struct StackText<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> StackText<N> {
    /// An empty text (nothing allocated: the buffer lives in the value).
    pub const fn new() -> Self {
        StackText {
            buf: [0; N],
            len: 0,
        }
    }

    /// The text written so far, as UTF-8 bytes (whole characters only).
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl<const N: usize> Default for StackText<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> std::fmt::Write for StackText<N> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let room = N - self.len;
        let mut take = s.len().min(room);
        while !s.is_char_boundary(take) {
            take -= 1;
        }
        self.buf[self.len..self.len + take].copy_from_slice(&s.as_bytes()[..take]);
        self.len += take;
        if take < s.len() {
            Err(std::fmt::Error)
        } else {
            Ok(())
        }
    }
}

// SAFETY: every call is forwarded to `A` unchanged; counting touches only a const-initialized
// thread-local without a destructor, and the exit path formats on the stack and writes to fd 2
// without allocating.
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write;

    #[test]
    fn stack_text_formats_and_cuts_at_a_character_boundary() {
        let mut t = StackText::<16>::new();
        assert!(write!(t, "{} MiB", 64usize).is_ok());
        assert_eq!(t.as_bytes(), b"64 MiB");
        assert!(write!(t, " ééééééé").is_err());
        assert_eq!(std::str::from_utf8(t.as_bytes()).unwrap(), "64 MiB éééé");
    }
}
