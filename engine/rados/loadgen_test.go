//go:build ceph

package rados_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/cephbench/cephbench/engine"
	cbrados "github.com/cephbench/cephbench/engine/rados"
	"github.com/cephbench/cephbench/internal/cephtest"
)

func TestPoolCreatesOnlyNewObjectsAndRemovesWhatItIsGiven(t *testing.T) {
	conn := cephtest.Cluster(t)
	name := cephtest.Pool(t, conn, "cbtest")
	ioctx, err := conn.OpenIOContext(name)
	if err != nil {
		t.Fatal(err)
	}
	defer ioctx.Destroy()
	if err := ioctx.WriteFull("taken", []byte("someone's")); err != nil {
		t.Fatal(err)
	}
	pool, err := cbrados.OpenPool(cbrados.Target{Pool: name})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	created, err := pool.CreateExclusive(t.Context(), []string{"taken"})
	if err == nil || created[0] {
		t.Fatalf("creating an existing object: created %v, %v; want an error", created, err)
	}
	created, err = pool.CreateExclusive(t.Context(), []string{"a", "b"})
	if err != nil || !created[0] || !created[1] {
		t.Fatalf("created %v, %v", created, err)
	}
	if err := pool.Remove(t.Context(), []string{"a", "b", "never-made"}); err != nil {
		t.Fatal(err)
	}
	left := objects(t, conn, name)
	buf := make([]byte, 64)
	n, _ := ioctx.Read("taken", buf, 0)
	if !slices.Equal(left, []string{"taken"}) || string(buf[:n]) != "someone's" {
		t.Errorf("the pool holds %v, the existing object %q; want it alone and intact", left, buf[:n])
	}
	if _, err := cbrados.OpenPool(cbrados.Target{Pool: "no-such-pool"}); !engine.IsUsage(err) {
		t.Errorf("opening a missing pool: %v; want a usage error", err)
	}
}

func TestObjectSetWritesReadsAndStampsCompletions(t *testing.T) {
	conn := cephtest.Cluster(t)
	name := cephtest.Pool(t, conn, "cbtest")
	pool, err := cbrados.OpenPool(cbrados.Target{Pool: name})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	set := pool.Objects([]string{"other", "obj"}, []int64{0, 32})
	defer set.Close(t.Context())
	if sizes := set.ObjectSizes(); !slices.Equal(sizes, []int64{0, 32}) || set.Geometry().ObjectCount != 2 {
		t.Errorf("the set has sizes %v and geometry %+v; want the sizes given, 2 objects", sizes, set.Geometry())
	}
	q, err := set.NewQueue(2)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	done := make([]*engine.Op, 2)
	run := func(ops ...*engine.Op) {
		t.Helper()
		before := engine.Now()
		for _, op := range ops {
			if err := q.Submit(op); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := q.Reap(t.Context(), len(ops), done); n != len(ops) || err != nil {
			t.Fatalf("reaped %d of %d ops: %v", n, len(ops), err)
		}
		for _, op := range ops {
			if op.Completed <= before || op.Completed > engine.Now() {
				t.Errorf("object %d completed at %v, outside [%v, now]", op.Object, op.Completed, before)
			}
		}
	}
	data := []byte("0123456789abcdef")
	run(&engine.Op{Kind: engine.Write, Object: 1, Buf: data}, &engine.Op{Kind: engine.Write, Object: 1, Offset: 16, Buf: data})
	whole := &engine.Op{Kind: engine.Read, Object: 1, Offset: 8, Buf: make([]byte, 16)}
	short := &engine.Op{Kind: engine.Read, Object: 1, Offset: 24, Buf: make([]byte, 16)}
	run(whole, short)
	if whole.Err != nil || !bytes.Equal(whole.Buf, []byte("89abcdef01234567")) {
		t.Errorf("read %q, %v", whole.Buf, whole.Err)
	}
	if !errors.Is(short.Err, io.ErrUnexpectedEOF) {
		t.Errorf("a read past the object's end: %v; want io.ErrUnexpectedEOF", short.Err)
	}
	if n, err := q.Reap(t.Context(), 1, done); n != 0 || err == nil {
		t.Errorf("reaped %d ops with none in flight (%v); want none and an error", n, err)
	}
	if got := objects(t, conn, name); !slices.Equal(got, []string{"obj"}) {
		t.Errorf("the pool holds %v; want only the object written", got)
	}
}
