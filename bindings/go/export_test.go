package perps

import "unsafe"

// Test-only access to the package's internals (compiled into the package by go test alone).

// HoldCollectedStreamFrees makes the free of each stream its finalizer closed call entered,
// then wait until release is closed before freeing; restore puts the plain free back. It
// shows that the finalizer goroutine does not wait for perps_stream_free
// (TestStreamNeverClosedIsClosedByItsFinalizer).
func HoldCollectedStreamFrees(entered func(), release <-chan struct{}) (restore func()) {
	freeCollected.Store(func(p unsafe.Pointer) {
		entered()
		<-release
		freeStream(p)
	})
	return func() { freeCollected.Store(freeStream) }
}
