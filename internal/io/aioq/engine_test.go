package aioq_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/io/aioq"
)

func TestEngineQueueTimesAndChecksOps(t *testing.T) {
	q, b := newQueue(t, 2, 2)
	var written []*engine.Op
	closed := false
	eq := aioq.NewEngineQueue(q, aioq.Hooks{
		Describe: func(op *engine.Op) string { return "the block" },
		Written:  func(op *engine.Op) { written = append(written, op) },
		Closed:   func(freed bool) error { closed = freed; return nil },
	})
	if eq.Spare() != 2 {
		t.Fatalf("Spare() = %d; want 2", eq.Spare())
	}
	eq.Stage(engine.Now() + time.Hour)
	w := &engine.Op{Kind: engine.Write, Buf: make([]byte, blockSize)}
	r := &engine.Op{Kind: engine.Read, Buf: make([]byte, blockSize)}
	for _, op := range []*engine.Op{w, r} {
		if err := eq.Submit(op); err != nil {
			t.Fatal(err)
		}
	}
	b.Complete(2, 0x7e)
	done := make([]*engine.Op, 4)
	n, err := eq.Reap(context.Background(), 2, done)
	if err != nil || n != 2 {
		t.Fatalf("Reap: %d ops, %v", n, err)
	}
	for _, op := range done[:n] {
		if op.Err != nil || op.Issued == 0 || op.Completed < op.Issued {
			t.Errorf("%s: err %v, issued %v, completed %v", op.Kind, op.Err, op.Issued, op.Completed)
		}
	}
	if len(written) != 1 || written[0] != w {
		t.Errorf("Written hook saw %d ops; want the one write", len(written))
	}
	if r.Buf[0] != 0x7e {
		t.Errorf("the read's buffer holds %#x; want what the backend read", r.Buf[0])
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := eq.Submit(&engine.Op{Kind: engine.Read, Buf: make([]byte, blockSize)}); err != nil {
		t.Fatal(err)
	}
	if n, err := eq.Reap(ctx, 1, done); n != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("Reap with a canceled context and nothing completed: %d ops, %v", n, err)
	}
	b.Complete(1, 0)
	if err := eq.Close(); err != nil || !closed {
		t.Errorf("Close: %v, Closed hook told freed=%v", err, closed)
	}
}

func TestEngineQueueFailures(t *testing.T) {
	q, b := newQueue(t, 2, 0)
	eq := aioq.NewEngineQueue(q, aioq.Hooks{Describe: func(*engine.Op) string { return "block 7" }})
	short := &engine.Op{Kind: engine.Read, Buf: make([]byte, blockSize)}
	failed := &engine.Op{Kind: engine.Write, Buf: make([]byte, blockSize)}
	if err := eq.Submit(short); err != nil {
		t.Fatal(err)
	}
	b.CompleteWith(1, 0, blockSize/2)
	if err := eq.Submit(failed); err != nil {
		t.Fatal(err)
	}
	b.CompleteWith(1, 0, -int(syscall.EIO))
	done := make([]*engine.Op, 2)
	if n, err := eq.Reap(context.Background(), 2, done); n != 2 || err != nil {
		t.Fatalf("Reap: %d ops, %v", n, err)
	}
	if !errors.Is(short.Err, io.ErrUnexpectedEOF) || !strings.Contains(short.Err.Error(), "block 7") {
		t.Errorf("a read of half its length: %v; want io.ErrUnexpectedEOF naming the block", short.Err)
	}
	if !errors.Is(failed.Err, syscall.EIO) {
		t.Errorf("a write the backend failed with EIO: %v", failed.Err)
	}
	if err := eq.Close(); err != nil {
		t.Error(err)
	}
}
