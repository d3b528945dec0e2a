package perps

// Test-only access to the package's internals (compiled into the package by go test alone).

// SetCollectedStreamHook makes hook told each step of the end of a stream its finalizer
// closed, on the goroutine running it ("closed", "freeing", "freed": collectedHook in
// stream.go; blocking in "freeing" holds the free); restore empties the hook again. It shows
// where the finalizer runs each step (TestStreamNeverClosedIsClosedByItsFinalizer).
func SetCollectedStreamHook(hook func(event string)) (restore func()) {
	collectedHook.Store(hook)
	return func() { collectedHook.Store((func(string))(nil)) }
}

// SetSecretCopyHook makes hook shown each C copy of a secret argument ("made" with the secret
// in it, "freeing" after the wipe, just before the free: secretCopyHook in perps.go); c is C
// memory, valid only during the hook. restore empties the hook again. It shows the wipes no
// result shows (TestEverySecretCopyIsWipedBeforeItIsFreed).
func SetSecretCopyHook(hook func(event, name string, c []byte)) (restore func()) {
	secretCopyHook.Store(hook)
	return func() { secretCopyHook.Store((func(string, string, []byte))(nil)) }
}
