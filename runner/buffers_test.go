package runner

import "testing"

func TestBufferArenaAlignsAndSeparates(t *testing.T) {
	for _, align := range []int{0, 512, 4096, 65536} {
		a, err := newBufferArena(5, 3000, align)
		if err != nil {
			t.Fatal(err)
		}
		var bufs [][]byte
		for i := range 5 {
			b := a.buffer(i)
			if len(b) != 3000 || cap(b) != 3000 {
				t.Fatalf("align %d: buffer of len %d cap %d, want 3000", align, len(b), cap(b))
			}
			if align > 1 && uintptrOf(b)%uintptr(align) != 0 {
				t.Fatalf("align %d: buffer at %#x", align, uintptrOf(b))
			}
			for i := range b {
				b[i] = byte(len(bufs))
			}
			bufs = append(bufs, b)
		}
		for i, b := range bufs {
			if b[0] != byte(i) || b[len(b)-1] != byte(i) {
				t.Fatalf("align %d: buffer %d overwritten by a neighbour", align, i)
			}
		}
		if err := a.release(); err != nil {
			t.Fatal(err)
		}
	}
}
