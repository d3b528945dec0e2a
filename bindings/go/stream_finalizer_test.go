package perps_test

// A stream the program never closes: its finalizer closes it, and frees it on a goroutine of
// its own, so that the runtime's one finalizer goroutine does not wait for the free.

import (
	"encoding/json"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	perps "libperps/bindings/go"
)

// goroutineID is the running goroutine's number, from the first line of its stack trace
// ("goroutine 18 [running]:"): Go has no API for it; tests only compare two of them.
func goroutineID(t *testing.T) uint64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	fields := strings.Fields(string(buf))
	if len(fields) < 2 || fields[0] != "goroutine" {
		t.Errorf("no goroutine number in %q", buf)
		return 0
	}
	id, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		t.Errorf("no goroutine number in %q", buf)
	}
	return id
}

// A stream never closed is closed by its finalizer (its connection leaves the venue) and
// freed on a goroutine of its own: the runtime's one finalizer goroutine returns before
// perps_stream_free, which can take about 2 s, has finished.
func TestStreamNeverClosedIsClosedByItsFinalizer(t *testing.T) {
	sb := startSandbox(t)
	client, err := perps.NewClient(sb.BaseURL, sb.PerpsURL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	connections := func() int {
		resp, err := http.Get(sb.AdminURL + "/ws/connections")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var listed []interface{}
		if err := json.NewDecoder(resp.Body).Decode(&listed); err != nil {
			t.Fatal(err)
		}
		return len(listed)
	}
	// The steps of the collected stream's end, in order, each with the goroutine it ran on
	// (the package's test hook), and a sentinel's finalizer below. The free is held (its
	// "freeing" step blocks) until the test has seen that sentinel finalized, as a slow I/O
	// thread would hold perps_stream_free.
	type step struct {
		event     string
		goroutine uint64
	}
	var mu sync.Mutex
	var steps []step
	record := func(event string) {
		s := step{event, goroutineID(t)}
		mu.Lock()
		defer mu.Unlock()
		steps = append(steps, s)
	}
	snapshot := func() []step {
		mu.Lock()
		defer mu.Unlock()
		return append([]step(nil), steps...)
	}
	// first waits (until deadline) for the first step named event and returns its index.
	first := func(event string, deadline time.Time, gc bool) (int, step) {
		for {
			seen := snapshot()
			for i, s := range seen {
				if s.event == event {
					return i, s
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %q step within the deadline; steps %v", event, seen)
			}
			if gc {
				runtime.GC()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	release := make(chan struct{})
	var releaseOnce sync.Once
	releaseFree := func() { releaseOnce.Do(func() { close(release) }) }
	defer releaseFree()
	restore := perps.SetCollectedStreamHook(func(event string) {
		record(event)
		if event == "freeing" {
			<-release
		}
	})
	defer restore()

	func() {
		st, err := client.OpenStream(nil, `[{"channel":"price","symbol":"BTC-USD"}]`)
		if err != nil {
			t.Fatal(err)
		}
		nextWhere(t, st, isStatus("connected"))
	}() // st unreachable from here
	if n := connections(); n != 1 {
		t.Fatalf("%d connections open, want the stream's 1", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for connections() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the stream's connection is still open: the finalizer did not close it")
		}
		runtime.GC()
		time.Sleep(50 * time.Millisecond)
	}
	closedAt, closed := first("closed", deadline, true)
	freeingAt, freeing := first("freeing", deadline, false)
	if freeingAt < closedAt || freeing.goroutine == closed.goroutine {
		t.Fatalf("steps %v: the free must start after the close, on another goroutine than the finalizer's", snapshot())
	}

	// With that free still held, a finalizer of a later collection runs: the finalizer
	// goroutine (one for the whole process, running finalizers one after another: see
	// runtime.SetFinalizer) has returned from the stream's finalizer, and is the goroutine
	// that closed the stream.
	func() {
		sentinel := new([64]byte)
		runtime.SetFinalizer(sentinel, func(*[64]byte) { record("sentinel finalized") })
	}()
	_, sentinel := first("sentinel finalized", time.Now().Add(10*time.Second), true)
	if sentinel.goroutine != closed.goroutine {
		t.Fatalf("steps %v: the stream was closed on goroutine %d, not on the finalizer goroutine (%d)",
			snapshot(), closed.goroutine, sentinel.goroutine)
	}

	// Released, the free ends on its goroutine: the whole sequence is closed, freeing (not on
	// the finalizer goroutine), the finalizer goroutine free again, freed.
	releaseFree()
	first("freed", time.Now().Add(10*time.Second), false)
	all := snapshot()
	var order []string
	for _, s := range all {
		order = append(order, s.event)
	}
	if strings.Join(order, ", ") != "closed, freeing, sentinel finalized, freed" || all[3].goroutine != freeing.goroutine {
		t.Fatalf("steps %v: want closed, freeing, sentinel finalized, freed (freed where freeing)", all)
	}
}
