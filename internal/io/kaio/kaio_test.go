package kaio

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

var mechanisms = []string{LibAIO, IOURing}

const (
	bs = 4096
	// patience bounds every wait of a test: a hang fails instead.
	patience = 30 * time.Second
)

// forEach runs test once per mechanism.
func forEach(t *testing.T, test func(t *testing.T, mech string)) {
	for _, mech := range mechanisms {
		t.Run(mech, func(t *testing.T) { test(t, mech) })
	}
}

func newQueue(t *testing.T, mech string, depth int) Queue {
	t.Helper()
	q, err := New(mech, depth)
	if err != nil {
		t.Fatalf("New(%s, %d): %v", mech, depth, err)
	}
	t.Cleanup(func() {
		if err := q.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return q
}

// directDirs are where a test looks for a filesystem that takes O_DIRECT:
// the test's own directory, then /var/tmp, which is rarely tmpfs.
func directDirs(t *testing.T) []string { return []string{t.TempDir(), os.TempDir(), "/var/tmp"} }

// openFile creates a file of size bytes and opens it read-write, with
// O_DIRECT if direct and some filesystem here takes it; it reports
// whether it did.
func openFile(t *testing.T, size int64, direct bool) (*os.File, bool) {
	t.Helper()
	dirs := directDirs(t)[:1]
	if direct {
		dirs = directDirs(t)
	}
	for _, dir := range dirs {
		d, err := os.MkdirTemp(dir, "kaio-test")
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		path := filepath.Join(d, "data")
		if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		flag := os.O_RDWR
		if direct {
			flag |= unix.O_DIRECT
		}
		f, err := os.OpenFile(path, flag, 0)
		if errors.Is(err, unix.EINVAL) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f, direct
	}
	t.Logf("no filesystem here takes O_DIRECT: buffered I/O")
	f, _ := openFile(t, size, false)
	return f, false
}

// buffers maps n page-aligned buffers of size bytes outside Go's heap, as
// the runner does.
func buffers(t *testing.T, n, size int) [][]byte {
	t.Helper()
	m, err := unix.Mmap(-1, 0, n*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(m) })
	out := make([][]byte, n)
	for i := range out {
		out[i] = m[i*size : (i+1)*size : (i+1)*size]
	}
	return out
}

// op is one read or write a test runs through a queue.
type op struct {
	fd    int
	write bool
	buf   []byte
	off   int64
	res   int64
	done  bool
}

// run runs ops through q, keeping as many in flight as q has slots, and
// records each op's result.
func run(t *testing.T, q Queue, ops []*op) {
	t.Helper()
	bySlot := make([]*op, q.Depth())
	free := make([]int, 0, q.Depth())
	for s := q.Depth() - 1; s >= 0; s-- {
		free = append(free, s)
	}
	out := make([]Completion, q.Depth())
	next, finished := 0, 0
	deadline := time.Now().Add(patience)
	for finished < len(ops) {
		for next < len(ops) && len(free) > 0 && q.Pending() < q.Batch() {
			s := free[len(free)-1]
			o := ops[next]
			if err := q.Prep(s, o.fd, o.write, o.buf, o.off); err != nil {
				t.Fatalf("Prep: %v", err)
			}
			free, bySlot[s] = free[:len(free)-1], o
			next++
		}
		n, err := q.Wait(1, patience, out)
		if err != nil {
			t.Fatalf("Wait: %v", err)
		}
		for _, c := range out[:n] {
			o := bySlot[c.Slot]
			if o == nil || o.done {
				t.Fatalf("a completion for slot %d, which holds no op in flight", c.Slot)
			}
			o.res, o.done, bySlot[c.Slot] = c.Res, true, nil
			free = append(free, c.Slot)
			finished++
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d ops completed in %v", finished, len(ops), patience)
		}
	}
	if q.InFlight() != 0 || q.Pending() != 0 {
		t.Errorf("after every op completed: InFlight() = %d, Pending() = %d; want 0, 0", q.InFlight(), q.Pending())
	}
}

// pattern fills b with bytes that differ for every block and offset.
func pattern(b []byte, block int) {
	for i := range b {
		b[i] = byte(block*7 + i*13 + i>>8)
	}
}

func TestReadBackWhatWasWritten(t *testing.T) {
	forEach(t, func(t *testing.T, mech string) {
		for _, direct := range []bool{true, false} {
			t.Run(map[bool]string{true: "direct", false: "buffered"}[direct], func(t *testing.T) {
				const blocks, depth = 48, 8
				f, direct := openFile(t, blocks*bs, direct)
				q := newQueue(t, mech, depth)
				bufs := buffers(t, 2*blocks, bs)
				writes, reads := make([]*op, blocks), make([]*op, blocks)
				for i := range blocks {
					pattern(bufs[i], i)
					// Out of file order, so slots and offsets do not pair up.
					off := int64((i*5)%blocks) * bs
					writes[i] = &op{fd: int(f.Fd()), write: true, buf: bufs[i], off: off}
					reads[i] = &op{fd: int(f.Fd()), buf: bufs[blocks+i], off: off}
				}
				run(t, q, writes)
				run(t, q, reads)
				for i := range blocks {
					if writes[i].res != bs || reads[i].res != bs {
						t.Fatalf("block %d (direct %v): write returned %d, read %d; want %d", i, direct, writes[i].res, reads[i].res, bs)
					}
					if !bytes.Equal(reads[i].buf, writes[i].buf) {
						t.Fatalf("block %d (direct %v): read back other bytes than were written", i, direct)
					}
					onDisk := make([]byte, bs)
					if _, err := unix.Pread(int(f.Fd()), bufs[blocks+i], writes[i].off); err != nil {
						t.Fatal(err)
					}
					copy(onDisk, bufs[blocks+i])
					if !bytes.Equal(onDisk, writes[i].buf) {
						t.Fatalf("block %d (direct %v): the file holds other bytes than were written", i, direct)
					}
				}
			})
		}
	})
}

// TestErrorsAreCompletions checks that an op the kernel refuses comes back
// as a completion with its errno, and that the ops around it still run.
func TestErrorsAreCompletions(t *testing.T) {
	forEach(t, func(t *testing.T, mech string) {
		f, _ := openFile(t, 4*bs, false)
		wo, err := os.OpenFile(f.Name(), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer wo.Close()
		ro, err := os.Open(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		// Above any process's descriptor limit, so never open.
		const notOpen = 1 << 30

		bufs := buffers(t, 5, bs)
		ops := []*op{
			{fd: int(f.Fd()), write: true, buf: bufs[0], off: 0},
			{fd: int(wo.Fd()), buf: bufs[1], off: bs},              // read on a write-only descriptor
			{fd: int(ro.Fd()), write: true, buf: bufs[2], off: bs}, // write on a read-only one
			{fd: notOpen, buf: bufs[3], off: 0},
			{fd: int(f.Fd()), write: true, buf: bufs[4], off: 2 * bs},
		}
		want := []int64{bs, -int64(unix.EBADF), -int64(unix.EBADF), -int64(unix.EBADF), bs}
		run(t, newQueue(t, mech, len(ops)), ops)
		for i, o := range ops {
			if o.res != want[i] {
				t.Errorf("op %d: result %d; want %d", i, o.res, want[i])
			}
		}
	})
}

func TestShortReadAtEndOfFile(t *testing.T) {
	forEach(t, func(t *testing.T, mech string) {
		f, _ := openFile(t, bs+100, false)
		bufs := buffers(t, 2, bs)
		ops := []*op{{fd: int(f.Fd()), buf: bufs[0], off: bs}, {fd: int(f.Fd()), buf: bufs[1], off: 2 * bs}}
		run(t, newQueue(t, mech, 2), ops)
		if ops[0].res != 100 || ops[1].res != 0 {
			t.Errorf("reads across and past the end of the file returned %d and %d; want 100 and 0", ops[0].res, ops[1].res)
		}
	})
}

func TestMisuseIsAnError(t *testing.T) {
	forEach(t, func(t *testing.T, mech string) {
		for _, depth := range []int{0, -1, MaxDepth + 1} {
			if q, err := New(mech, depth); err == nil {
				q.Close()
				t.Errorf("New(%s, %d) succeeded", mech, depth)
			}
		}
		f, _ := openFile(t, bs, false)
		fd := int(f.Fd())
		q := newQueue(t, mech, 2)
		buf := buffers(t, 1, bs)[0]
		out := make([]Completion, 2)
		if _, err := q.Wait(1, time.Second, out); err == nil {
			t.Error("Wait(1) with nothing in flight succeeded")
		}
		for _, slot := range []int{-1, 2} {
			if err := q.Prep(slot, fd, false, buf, 0); err == nil {
				t.Errorf("Prep in slot %d of a queue of depth 2 succeeded", slot)
			}
		}
		if err := q.Prep(0, -1, false, buf, 0); err == nil {
			t.Error("Prep on descriptor -1 succeeded")
		}
		if q.InFlight() != 0 {
			t.Fatalf("failed Preps left %d ops in flight", q.InFlight())
		}
		if err := q.Prep(0, fd, false, buf, 0); err != nil {
			t.Fatal(err)
		}
		if err := q.Prep(0, fd, false, buf, 0); err == nil {
			t.Error("Prep in a slot that holds an op succeeded")
		}
		if _, err := q.Wait(1, time.Second, out[:0]); err == nil {
			t.Error("Wait(1) with no room for a completion succeeded")
		}
		if n, err := q.Wait(1, patience, out); n != 1 || err != nil || out[0] != (Completion{Slot: 0, Res: bs}) {
			t.Errorf("Wait: %d completions %v, %v; want slot 0 with %d bytes", n, out[:n], err, bs)
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		if err := q.Prep(0, fd, false, buf, 0); err == nil {
			t.Error("Prep after Close succeeded")
		}
		if _, err := q.Wait(0, 0, out); err == nil {
			t.Error("Wait after Close succeeded")
		}
	})
	if q, err := New("posix-aio", 1); err == nil {
		q.Close()
		t.Error("New of an unknown mechanism succeeded")
	}
}

// TestWaitForNoneDoesNotBlock checks that Wait(0) submits and returns at
// once, whatever is in flight.
func TestWaitForNoneDoesNotBlock(t *testing.T) {
	forEach(t, func(t *testing.T, mech string) {
		f, _ := openFile(t, 8*bs, false)
		q := newQueue(t, mech, 8)
		out := make([]Completion, 8)
		if n, err := q.Wait(0, -1, out); n != 0 || err != nil {
			t.Fatalf("Wait(0) on an empty queue: %d, %v", n, err)
		}
		bufs := buffers(t, 8, bs)
		for i, b := range bufs {
			if err := q.Prep(i, int(f.Fd()), false, b, int64(i)*bs); err != nil {
				t.Fatal(err)
			}
		}
		n, err := q.Wait(0, -1, out)
		if err != nil {
			t.Fatal(err)
		}
		if q.Pending() != 0 {
			t.Errorf("Wait(0) left %d ops unsubmitted", q.Pending())
		}
		for got := n; got < len(bufs); {
			n, err := q.Wait(1, patience, out)
			if err != nil || n == 0 {
				t.Fatalf("Wait(1): %d, %v", n, err)
			}
			got += n
		}
	})
}

// TestCloseWaitsForOpsInFlight closes queues with ops submitted and ops
// only prepared: Close must return, and leave the buffers to the caller.
func TestCloseWaitsForOpsInFlight(t *testing.T) {
	forEach(t, func(t *testing.T, mech string) {
		const depth = 32
		f, _ := openFile(t, depth*bs, true)
		bufs := buffers(t, depth, bs)
		for _, submit := range []bool{true, false} {
			q, err := New(mech, depth)
			if err != nil {
				t.Fatal(err)
			}
			for i, b := range bufs {
				if err := q.Prep(i, int(f.Fd()), false, b, int64(i)*bs); err != nil {
					t.Fatal(err)
				}
			}
			if submit {
				if err := q.Submit(); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan error, 1)
			go func() { done <- q.Close() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Close (submitted %v): %v", submit, err)
				}
			case <-time.After(patience):
				t.Fatalf("Close with %d ops in flight did not return", depth)
			}
		}
	})
}

// TestDeeperThanTheSubmissionRing checks a queue deeper than io_uring's
// largest submission ring: ops go in in batches.
func TestDeeperThanTheSubmissionRing(t *testing.T) {
	const depth = maxSQEntries + 8
	q := newQueue(t, IOURing, depth)
	if q.Batch() != maxSQEntries {
		t.Fatalf("Batch() = %d; want %d", q.Batch(), maxSQEntries)
	}
	f, _ := openFile(t, bs, false)
	buf := make([]byte, 1)
	for i := range depth {
		err := q.Prep(i, int(f.Fd()), false, buf, int64(i%bs))
		if errors.Is(err, errFull) {
			if i != maxSQEntries {
				t.Fatalf("the batch was full after %d ops", i)
			}
			if err := q.Submit(); err != nil {
				t.Fatal(err)
			}
			err = q.Prep(i, int(f.Fd()), false, buf, int64(i%bs))
		}
		if err != nil {
			t.Fatalf("Prep %d: %v", i, err)
		}
	}
	out := make([]Completion, depth)
	for got := 0; got < depth; {
		n, err := q.Wait(depth-got, patience, out)
		if err != nil || n == 0 {
			t.Fatalf("Wait after %d completions: %d, %v", got, n, err)
		}
		for _, c := range out[:n] {
			if c.Res != 1 {
				t.Fatalf("slot %d: result %d; want 1", c.Slot, c.Res)
			}
		}
		got += n
	}
}

// TestABILayouts checks the kernel structures against the sizes and
// offsets of linux/aio_abi.h and linux/io_uring.h on 64-bit machines.
func TestABILayouts(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the offsets checked are those of 64-bit machines")
	}
	for _, c := range []struct {
		what      string
		got, want uintptr
	}{
		{"sizeof(struct iocb)", unsafe.Sizeof(iocb{}), 64},
		{"iocb.aio_lio_opcode", unsafe.Offsetof(iocb{}.opcode), 16},
		{"iocb.aio_fildes", unsafe.Offsetof(iocb{}.fildes), 20},
		{"iocb.aio_buf", unsafe.Offsetof(iocb{}.buf), 24},
		{"iocb.aio_offset", unsafe.Offsetof(iocb{}.offset), 40},
		{"sizeof(struct io_event)", unsafe.Sizeof(ioEvent{}), 32},
		{"io_event.res", unsafe.Offsetof(ioEvent{}.res), 16},
		{"sizeof(struct io_uring_params)", unsafe.Sizeof(uringParams{}), 120},
		{"io_uring_params.sq_off", unsafe.Offsetof(uringParams{}.sqOff), 40},
		{"io_uring_params.cq_off", unsafe.Offsetof(uringParams{}.cqOff), 80},
		{"sizeof(struct io_sqring_offsets)", unsafe.Sizeof(sqringOffsets{}), 40},
		{"sizeof(struct io_uring_sqe)", unsafe.Sizeof(sqe{}), 64},
		{"io_uring_sqe.off", unsafe.Offsetof(sqe{}.off), 8},
		{"io_uring_sqe.addr", unsafe.Offsetof(sqe{}.addr), 16},
		{"io_uring_sqe.len", unsafe.Offsetof(sqe{}.len), 24},
		{"io_uring_sqe.user_data", unsafe.Offsetof(sqe{}.userData), 32},
		{"sizeof(struct io_uring_cqe)", unsafe.Sizeof(cqe{}), 16},
		{"io_uring_cqe.res", unsafe.Offsetof(cqe{}.res), 8},
		{"sizeof(struct io_uring_getevents_arg)", unsafe.Sizeof(getEventsArg{}), 24},
		{"io_uring_getevents_arg.ts", unsafe.Offsetof(getEventsArg{}.ts), 16},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d; want %d", c.what, c.got, c.want)
		}
	}
}
