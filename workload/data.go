package workload

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/cephbench/cephbench/engine"
)

// The data every write carries: a fixed pseudo-random pattern (so it is
// neither zero nor trivially compressible) with a header naming the block,
// so a read can check it got the block it asked for.
//
//	bytes 0..7   magic "cbenchv1"
//	bytes 8..15  file or object index, little endian
//	bytes 16..23 offset, little endian
const (
	headerLen = 24
	magic     = "cbenchv1"
)

var (
	patternMu sync.Mutex
	pattern   []byte
)

// patternOf returns at least n bytes of the shared pattern. The slice is
// read-only.
func patternOf(n int) []byte {
	patternMu.Lock()
	defer patternMu.Unlock()
	if len(pattern) < n {
		p := make([]byte, max(n, 1<<20))
		r := rand.New(rand.NewPCG(0x636570682d62656e, 0x6368))
		for i := 0; i+8 <= len(p); i += 8 {
			binary.LittleEndian.PutUint64(p[i:], r.Uint64())
		}
		pattern = p
	}
	return pattern[:n]
}

// Fill writes the data pattern into buf, which is then valid for any block
// once Stamp has named the block.
func Fill(buf []byte) { copy(buf, patternOf(len(buf))) }

// Stamp writes op's block header into op.Buf (already Filled). Buffers
// shorter than the header carry no header and verify by pattern alone.
func Stamp(op *engine.Op) { StampBlock(op.Buf, blockID(op), op.Offset) }

// StampBlock writes the header of block (id, offset) into buf; engines use
// it to lay out files with verifiable data.
func StampBlock(buf []byte, id, offset int64) {
	if len(buf) < headerLen {
		return
	}
	copy(buf, magic)
	binary.LittleEndian.PutUint64(buf[8:], uint64(id))
	binary.LittleEndian.PutUint64(buf[16:], uint64(offset))
}

// Check verifies that a completed read returned the block the workload
// wrote at op's place. The error wraps engine.ErrVerify.
func Check(op *engine.Op) error {
	buf := op.Buf
	if len(buf) >= headerLen {
		id, off := blockID(op), op.Offset
		if string(buf[:8]) != magic ||
			int64(binary.LittleEndian.Uint64(buf[8:])) != id ||
			int64(binary.LittleEndian.Uint64(buf[16:])) != off {
			return fmt.Errorf("%w: block %d at offset %d has a wrong header", engine.ErrVerify, id, off)
		}
	}
	from := min(headerLen, len(buf))
	if !bytes.Equal(buf[from:], patternOf(len(buf))[from:]) {
		return fmt.Errorf("%w: block %d at offset %d has wrong data", engine.ErrVerify, blockID(op), op.Offset)
	}
	return nil
}

func blockID(op *engine.Op) int64 {
	if op.Object != 0 {
		return op.Object
	}
	return int64(op.File)
}
