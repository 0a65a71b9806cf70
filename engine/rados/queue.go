//go:build ceph

package rados

import (
	"fmt"
	"strconv"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/io/aioq"
	"github.com/cephbench/cephbench/internal/peer/radosbench"
)

// NewQueue returns an aio queue of the given depth on the session's pool,
// which stages up to aioq.SpareFor more ops.
func (s *Session) NewQueue(depth int) (engine.Queue, error) {
	aio, err := newAIOQueue(s.ioctx, depth, aioq.SpareFor(depth, s.opSize))
	if err != nil {
		return nil, err
	}
	if !s.target.NoHints {
		aio.hint(s.objSize, s.opSize)
	}
	s.queues.Add(1)
	return aioq.NewEngineQueue(aio.Queue, aioq.Hooks{
		Name: func(b []byte, op *engine.Op) []byte {
			b = append(append(b, s.prefix...), "_object"...)
			return strconv.AppendInt(b, op.Object, 10)
		},
		Describe: func(op *engine.Op) string {
			return fmt.Sprintf("%s at %d", radosbench.ObjectName(s.prefix, op.Object), op.Offset)
		},
		Written: s.noteWrite,
		Closed:  aio.closer(&s.queues),
	}), nil
}
