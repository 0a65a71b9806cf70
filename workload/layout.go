package workload

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/cephbench/cephbench/internal/failpoint"
)

// layoutChunk is the size of one layout write: large enough that laying
// out a GiB takes a thousand writes, not a quarter million.
const layoutChunk = 1 << 20

// LayOut writes the blocks of dst from offset from (a multiple of bs) up
// to size, each as a workload write would leave block (id, offset), so
// that reads of a new file or image verify and read real blocks, not
// holes. parallel writers share the work (at least one); it stops at the
// first error or when ctx ends.
func LayOut(ctx context.Context, dst io.WriterAt, id, bs, from, size int64, parallel int) error {
	chunk := max(bs, layoutChunk/bs*bs)
	next := make(chan int64)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	for range max(parallel, 1) {
		wg.Go(func() {
			buf := make([]byte, min(chunk, size-from))
			// Every block carries the same pattern; only the headers change.
			for b := int64(0); b < int64(len(buf)); b += bs {
				Fill(buf[b:min(b+bs, int64(len(buf)))])
			}
			for off := range next {
				n := min(chunk, size-off)
				for b := int64(0); b < n; b += bs {
					StampBlock(buf[b:min(b+bs, n)], id, off+b)
				}
				failpoint.Hit(failpoint.Layout)
				if _, err := dst.WriteAt(buf[:n], off); err != nil {
					mu.Lock()
					failed = errors.Join(failed, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	var err error
	for off := from; off < size; off += chunk {
		mu.Lock()
		err = failed
		mu.Unlock()
		if err != nil {
			break
		}
		select {
		case next <- off:
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil {
			break
		}
	}
	close(next)
	wg.Wait()
	return errors.Join(err, failed)
}
