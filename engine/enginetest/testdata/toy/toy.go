// Package toy is an engine that keeps its blocks in this process's memory,
// scheme "toy": toy://NAME. It is what the README's "Adding an engine"
// walks through: a folder, a registration that declares the targets, and
// the conformance suite.
package toy

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/writeahead"
	"github.com/cephbench/cephbench/spec"
)

func init() {
	engine.Register("toy", engine.Typed(Open), engine.Description{
		Syntax: "toy://NAME", Layout: engine.Blocks,
		Cleaner: func(_ context.Context, t spec.Target, _ *writeahead.Judge) error { cleanKept(t.Location); return nil },
	})
}

// defaultSize is a file's size when the workload sets none.
const defaultSize = 1 << 20

var (
	mu sync.Mutex
	// stores holds each target's files by name.
	stores = map[string]map[string][]byte{}
)

// fileName is the name of worker i's file; the cleaner removes only these.
func fileName(i int) string { return fmt.Sprintf("toy.%d", i) }

// Leftovers lists the names of a target's files.
func Leftovers(location string) []string {
	mu.Lock()
	defer mu.Unlock()
	var names []string
	for name := range stores[location] {
		names = append(names, name)
	}
	return names
}

// Plant puts a file the engine did not create at a target.
func Plant(location, name string) {
	mu.Lock()
	defer mu.Unlock()
	if stores[location] == nil {
		stores[location] = map[string][]byte{}
	}
	stores[location][name] = []byte("not a benchmark's")
}

func cleanKept(location string) {
	mu.Lock()
	defer mu.Unlock()
	for name := range stores[location] {
		if strings.HasPrefix(name, "toy.") {
			delete(stores[location], name)
		}
	}
}

// Session is an open target: one file per worker. Do and Geometry are
// safe for concurrent use.
type Session struct {
	location string
	files    [][]byte
	created  []string
	keep     bool
}

// Open finds or creates the workload's files.
func Open(_ context.Context, w *spec.Workload) (*Session, error) {
	if w.Target.Location == "" {
		return nil, engine.Usagef("toy target: no name given (want toy://NAME)")
	}
	size := int(w.FileSize)
	if size == 0 {
		size = defaultSize
	}
	mu.Lock()
	defer mu.Unlock()
	store := stores[w.Target.Location]
	if store == nil {
		store = map[string][]byte{}
		stores[w.Target.Location] = store
	}
	s := &Session{location: w.Target.Location, keep: w.Keep}
	for i := range w.Workers {
		name := fileName(i)
		if len(store[name]) < size {
			if store[name] == nil {
				s.created = append(s.created, name)
			}
			store[name] = append(store[name], make([]byte, size-len(store[name]))...)
		}
		s.files = append(s.files, store[name])
	}
	return s, nil
}

// Geometry is one file of the workload's size per worker.
func (s *Session) Geometry() engine.Geometry {
	return engine.Geometry{Layout: engine.Blocks, Files: len(s.files), Size: int64(len(s.files[0]))}
}

// Do copies the op's buffer to or from its file.
func (s *Session) Do(ctx context.Context, op *engine.Op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	data := s.files[op.File][op.Offset:]
	if op.Kind == engine.Write {
		copy(data, op.Buf)
	} else {
		copy(op.Buf, data)
	}
	return nil
}

// Close removes the files the session created, unless it keeps them.
func (s *Session) Close(context.Context) error {
	if s.keep {
		return nil
	}
	mu.Lock()
	defer mu.Unlock()
	for _, name := range s.created {
		delete(stores[s.location], name)
	}
	if len(stores[s.location]) == 0 {
		delete(stores, s.location)
	}
	return nil
}
