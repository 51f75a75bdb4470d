#pragma once
// The training thread gives way to the window: on Linux the calling thread
// (and the OpenMP threads it starts later, which inherit its nice value)
// runs at nice +10, so that the GUI thread — at its normal priority — gets
// a core whenever it has input to answer, even while a run keeps both cores
// busy. Training loses time only while the window is busy. A no-op
// elsewhere, or where the priority cannot be changed. PLAB_TRAINING_NICE
// (0-19) sets another value, 0 none (bench/bench_notebook compares them).
namespace plab::ui {

// Returns whether the priority was lowered.
bool lowerCurrentThreadPriority();

}  // namespace plab::ui
