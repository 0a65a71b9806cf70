//go:build ceph

package rbd

/*
#cgo LDFLAGS: -lrbd -lrados
#cgo CFLAGS: -I${SRCDIR}/../../internal/io/aioq
#cgo CXXFLAGS: -std=c++17 -O2 -I${SRCDIR}/../../internal/io/aioq
#include <stdlib.h>
#include "backend.h"

static void *cbrbd_issue_fn(void) { return (void *)cbrbd_issue; }
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/ceph/go-ceph/rados"
	"github.com/ceph/go-ceph/rbd"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine"
	cbrados "github.com/cephbench/cephbench/engine/rados"
	"github.com/cephbench/cephbench/engine/writeahead"
	"github.com/cephbench/cephbench/internal/failpoint"
	"github.com/cephbench/cephbench/internal/io/aioq"
	"github.com/cephbench/cephbench/internal/io/devsafe"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/workload"
)

// The image metadata cephbench keeps on images it creates: createdKey
// marks them (its value names the process), so that a later cleanup may
// remove a kept one; blockSizeKey is the block size of the verifiable
// data an image holds, as laid out or written whole by cephbench.
const (
	createdKey   = "cephbench.created"
	blockSizeKey = "cephbench.block-size"
)

func init() {
	engine.Register("rbd", engine.Typed(Open), engine.Description{
		Syntax: "rbd://POOL/IMAGE", Layout: engine.Blocks, Kind: engine.KindBlockImage,
		LocationNames: []string{"pool", "image"},
		Creates: func(location string) bool {
			t, err := ParseTarget(location)
			return err == nil && t.Create
		},
		Cleaner:     func(_ context.Context, t spec.Target, _ *writeahead.Judge) error { return cleanKept(t) },
		Share:       share,
		ShareRegion: shareRegion,
	})
}

// share gives a host its own image, IMAGE-HOST, which it creates: hosts
// writing one image at once would write over each other's blocks.
func share(w *spec.Workload, host string) error {
	t, err := ParseTarget(w.Target.Location)
	if err != nil {
		return err
	}
	if !t.Create {
		return engine.Usagef("rbd://%s/%s is one image: on several hosts give ?create=true (and a size) so that each host makes its own, %s-HOST", t.Conn.Pool, t.Image, t.Image)
	}
	path, query, _ := strings.Cut(w.Target.Location, "?")
	w.Target.Location = strings.TrimRight(path, "/") + "-" + host + "?" + query
	return nil
}

// shareRegion gives host k of n its region of one image that exists; no
// host creates or removes it.
func shareRegion(w *spec.Workload, k, n int) error {
	t, err := ParseTarget(w.Target.Location)
	if err != nil {
		return err
	}
	if t.Create {
		return engine.Usagef("rbd://%s/%s: hosts share an image that exists; drop --create (or create=true) and create it first", t.Conn.Pool, t.Image)
	}
	path, query, _ := strings.Cut(w.Target.Location, "?")
	q, _ := url.ParseQuery(query) // parsed above
	q.Set("region", fmt.Sprintf("%d/%d", k, n))
	w.Target.Location = path + "?" + q.Encode()
	return nil
}

// Session is an open image. Do, Geometry and NewQueue are safe for
// concurrent use; Close is called once, after every op and queue has
// finished.
type Session struct {
	conn    *rados.Conn
	shared  *cluster.Shared // conn, which the run's watch shares
	ioctx   *rados.IOContext
	target  Target
	image   *C.cbrbd
	created bool
	keep    bool
	bs      int64
	base    int64 // where the session's region begins
	geo     engine.Geometry
	queues  sync.WaitGroup
}

var (
	_ engine.AsyncSession    = (*Session)(nil)
	_ engine.ClusterReporter = (*Session)(nil)
	_ engine.ClusterWatcher  = (*Session)(nil)
	_ engine.Syncer          = (*Session)(nil)
)

// connect opens t's pool, or fails with a usage error if it does not exist.
func connect(t Target, opTimeout spec.Duration) (*rados.Conn, *rados.IOContext, error) {
	conn, err := cbrados.Connect(t.Conn, opTimeout.D())
	if err != nil {
		return nil, nil, err
	}
	if _, err := conn.GetPoolByName(t.Conn.Pool); err != nil {
		conn.Shutdown()
		return nil, nil, engine.Usagef("pool %q does not exist", t.Conn.Pool)
	}
	ioctx, err := conn.OpenIOContext(t.Conn.Pool)
	if err != nil {
		conn.Shutdown()
		return nil, nil, fmt.Errorf("opening pool %s: %w", t.Conn.Pool, err)
	}
	return conn, ioctx, nil
}

// Open connects and opens the image, creating it if the target asks and
// it does not exist. It refuses with an *engine.UsageError, before any
// I/O: a missing pool or image; a workload that writes to an image in
// use or one carrying a filesystem or partition signature, or a region of
// an image cephbench did not create, without Force;
// a region larger than the image; verified reads of data cephbench did
// not write.
func Open(ctx context.Context, w *spec.Workload) (*Session, error) {
	t, err := ParseTarget(w.Target.Location)
	if err != nil {
		return nil, err
	}
	conn, ioctx, err := connect(t, w.OpTimeout)
	if err != nil {
		return nil, err
	}
	s := &Session{conn: conn, shared: cluster.Share(cluster.NewConn(conn)), ioctx: ioctx, target: t, keep: w.Keep, bs: int64(w.BlockSize)}
	fail := func(err error) (*Session, error) {
		s.keep = false // nothing of a failed Open is kept
		return nil, errors.Join(err, s.Close(ctx))
	}
	name := t.Conn.Pool + "/" + t.Image

	ours, mark, err := s.inspect(w)
	switch {
	case errors.Is(err, rbd.ErrNotFound) && !t.Create:
		return fail(engine.Usagef("image %s does not exist: create it (rbd create), or let cephbench create it with --create and --size", name))
	case errors.Is(err, rbd.ErrNotFound) && w.FileSize == 0:
		return fail(engine.Usagef("creating image %s needs its size (--size)", name))
	case errors.Is(err, rbd.ErrNotFound):
		if err := s.create(uint64(w.Extent())); err != nil {
			return fail(err)
		}
		ours = true
	case err != nil:
		return fail(err)
	case w.Verify && w.Reads() && !ours:
		return fail(engine.Usagef("image %s holds data cephbench did not write, so reads cannot be verified: drop --verify, or let cephbench create the image", name))
	}

	// librbd's cache as the peers use it: writeback from the first write,
	// as the rbd tool sets it and fio's rbd engine gets with a flush; off
	// with Direct, as fio's direct=1 has it, so that every op reaches the
	// OSDs. Without the cache librbd can send a write from cephbench's
	// buffer instead of a copy (it completes the op only once it no longer
	// holds the buffer); the cache keeps what it is given past completion,
	// so there the copy stays.
	options := [][2]string{{"rbd_cache_writethrough_until_flush", "false"}}
	if w.Direct {
		options = [][2]string{{"rbd_cache", "false"}, {"rbd_disable_zero_copy_writes", "false"}}
	}
	for _, o := range options {
		if err := conn.SetConfigOption(o[0], o[1]); err != nil {
			return fail(fmt.Errorf("ceph option %s=%s: %w", o[0], o[1], err))
		}
	}
	if ours && w.Writes() && !s.created {
		// Before the image is open: a kill from then on leaves a watch
		// the cleanup can tell is this process's.
		if err := s.setMetadata(clientKey, s.client()); err != nil {
			return fail(err)
		}
	}
	cname := C.CString(t.Image)
	defer C.free(unsafe.Pointer(cname))
	if r := C.cbrbd_open(C.rados_ioctx_t(ioctx.Pointer()), cname, &s.image); r < 0 {
		return fail(fmt.Errorf("opening image %s: %w", name, syscall.Errno(-r)))
	}
	if err := s.measure(w, name); err != nil {
		return fail(err)
	}
	// What an image cephbench created holds, for later sessions: blocks of
	// one size, or (written over with another size) a mix nothing can
	// verify. A new image, and one whose blocks a verified read would not
	// recognise, is laid out whole first.
	bs := strconv.FormatInt(s.bs, 10)
	switch {
	case s.created || (ours && w.Verify && w.Reads() && mark != bs):
		err = s.setMetadata(blockSizeKey, "0") // until the layout completes
		if err == nil {
			err = s.layOut(ctx)
		}
		if err == nil {
			err = s.setMetadata(blockSizeKey, bs)
		}
	case ours && mark != bs && w.Writes():
		err = s.setMetadata(blockSizeKey, "0")
	}
	if err != nil {
		return fail(err)
	}
	return s, nil
}

// measure sets the session's region of the open image: the image, or
// the workload's size of it, or the target's part of that, in whole
// blocks.
func (s *Session) measure(w *spec.Workload, name string) error {
	var size C.uint64_t
	if r := C.cbrbd_size(s.image, &size); r < 0 {
		return fmt.Errorf("image %s: %w", name, syscall.Errno(-r))
	}
	region := int64(size)
	switch extent := w.Extent(); {
	case extent > 0 && int64(extent) > region:
		return engine.Usagef("--size %s (with the offsets, %s) is larger than image %s (%s): cephbench never resizes an image it did not create", w.FileSize, extent, name, spec.Size(region))
	case extent > 0:
		region = int64(extent)
	}
	if t := s.target; t.Regions > 0 {
		blocks := region / s.bs
		s.base = blocks * int64(t.Region) / int64(t.Regions) * s.bs
		region = blocks*int64(t.Region+1)/int64(t.Regions)*s.bs - s.base
	}
	if region < s.bs {
		return engine.Usagef("image %s (%s) is smaller than one %s block", name, spec.Size(region), w.BlockSize)
	}
	s.geo = engine.Geometry{Layout: engine.Blocks, Files: 1, Size: region - region%s.bs}
	return nil
}

// inspect looks at the image without opening it for writes (which would
// make cephbench a watcher of it). It returns whether cephbench created
// the image and the block size of the verifiable data it holds ("0" if
// blocks of several sizes are mixed), or rbd.ErrNotFound.
func (s *Session) inspect(w *spec.Workload) (ours bool, mark string, err error) {
	name := s.target.Conn.Pool + "/" + s.target.Image
	img, err := rbd.OpenImageReadOnly(s.ioctx, s.target.Image, rbd.NoSnapshot)
	if err != nil {
		if errors.Is(err, rbd.ErrNotFound) {
			return false, "", err
		}
		return false, "", fmt.Errorf("opening image %s: %w", name, err)
	}
	defer img.Close()
	if _, err := img.GetMetadata(createdKey); err == nil {
		ours = true
		mark, _ = img.GetMetadata(blockSizeKey)
	}
	switch {
	case !w.Writes() || w.Force:
		return ours, mark, nil
	case s.target.Regions > 0 && !ours:
		// The other hosts writing their regions are its watchers: another
		// client using it could not be told from them.
		return false, "", engine.Usagef("image %s: hosts share it, each writing its own region, so whether another client uses it cannot be checked: share an image cephbench created (and kept), or pass --force", name)
	case s.target.Regions > 0:
		return ours, mark, nil
	}
	watchers, err := img.ListWatchers()
	if err != nil {
		return false, "", fmt.Errorf("listing the watchers of image %s: %w", name, err)
	}
	if len(watchers) > 0 {
		return false, "", engine.Usagef("image %s is in use (%d watchers, the first at %s: mapped, or open in another client): writing would corrupt what its user sees; pass --force to write anyway",
			name, len(watchers), watchers[0].Addr)
	}
	sig, err := devsafe.Signature(img)
	if err != nil {
		return false, "", fmt.Errorf("reading the start of image %s: %w", name, err)
	}
	if sig != "" {
		return false, "", engine.Usagef("image %s holds a %s signature at its start: writing would destroy it; pass --force to write anyway", name, sig)
	}
	return ours, mark, nil
}

// create creates the image, marked as cephbench's. A record object,
// put before the image is created and removed once it is marked, covers
// the moment between the two: a cleanup after a run killed then takes
// the unmarked image for cephbench's. The record holds the time and
// clientKey's value, "STAMP HOST PID CLIENT_ID": marking the image opens
// it, and so watches it, before the image can name its client.
func (s *Session) create(size uint64) error {
	name := s.target.Conn.Pool + "/" + s.target.Image
	record := creatingRecord(s.target.Image)
	stamp := strconv.FormatInt(time.Now().Unix(), 10)
	if err := s.ioctx.WriteFull(record, []byte(stamp+" "+s.client())); err != nil {
		return fmt.Errorf("recording the creation of image %s: %w", name, err)
	}
	if err := rbd.CreateImage(s.ioctx, s.target.Image, size, rbd.NewRbdImageOptions()); err != nil {
		return errors.Join(fmt.Errorf("creating image %s: %w", name, err), s.ioctx.Delete(record))
	}
	s.created = true
	host, _ := os.Hostname()
	if err := s.setMetadata(clientKey, s.client(), createdKey, fmt.Sprintf("%s:%d", host, os.Getpid())); err != nil {
		return err
	}
	return s.ioctx.Delete(record)
}

// setMetadata sets the image's metadata keys to their values, given in
// pairs, in that order.
func (s *Session) setMetadata(keyValues ...string) error {
	img, err := rbd.OpenImage(s.ioctx, s.target.Image, rbd.NoSnapshot)
	if err != nil {
		return fmt.Errorf("opening image %s/%s: %w", s.target.Conn.Pool, s.target.Image, err)
	}
	defer img.Close()
	for i := 0; i+1 < len(keyValues); i += 2 {
		if err := img.SetMetadata(keyValues[i], keyValues[i+1]); err != nil {
			return fmt.Errorf("image %s/%s: setting %s: %w", s.target.Conn.Pool, s.target.Image, keyValues[i], err)
		}
	}
	return nil
}

// layOut writes verifiable blocks over the whole region, so that reads of
// a new image read data from the OSDs (a never-written extent is answered
// without touching them) and can be verified.
func (s *Session) layOut(ctx context.Context) error {
	if err := workload.LayOut(ctx, imageWriter{s.image, s.base}, 0, s.bs, 0, s.geo.Size, 8); err != nil {
		return fmt.Errorf("laying out image %s/%s: %w", s.target.Conn.Pool, s.target.Image, err)
	}
	return nil
}

// imageWriter writes to an image with blocking librbd calls, its offsets
// from base, as ops' are.
type imageWriter struct {
	image *C.cbrbd
	base  int64
}

func (w imageWriter) WriteAt(b []byte, off int64) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r := C.cbrbd_write(w.image, C.uint64_t(w.base+off), C.size_t(len(b)), (*C.char)(unsafe.Pointer(&b[0])))
	if r < 0 {
		return 0, syscall.Errno(-r)
	}
	return int(r), nil
}

// ClusterSnapshot records the cluster's state over the session's
// connection.
func (s *Session) ClusterSnapshot() (*cluster.Snapshot, error) { return cluster.Collect(s.conn) }

// DialCluster shares the session's connection with a watch of the
// image's pool.
func (s *Session) DialCluster() (cluster.Conn, []string, error) {
	return s.shared.Hold(), []string{s.target.Conn.Pool}, nil
}

// Geometry returns the Blocks layout over one region: the image, or the
// workload's size of it, or the target's part of that; ops' offsets are
// from the region's start.
func (s *Session) Geometry() engine.Geometry { return s.geo }

// Do executes op with a blocking librbd call.
func (s *Session) Do(ctx context.Context, op *engine.Op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p := (*C.char)(unsafe.Pointer(&op.Buf[0]))
	off := C.uint64_t(s.base + op.Offset)
	var r C.ssize_t
	if op.Kind == engine.Write {
		r = C.cbrbd_write(s.image, off, C.size_t(len(op.Buf)), p)
	} else {
		r = C.cbrbd_read(s.image, off, C.size_t(len(op.Buf)), p)
	}
	switch {
	case r < 0:
		return syscall.Errno(-r)
	case op.Kind == engine.Read && int(r) < len(op.Buf):
		return fmt.Errorf("offset %d: read %d of %d bytes", op.Offset, r, len(op.Buf))
	}
	return nil
}

// NewQueue returns an aio queue of the given depth on the image, which
// stages up to aioq.SpareFor more ops.
func (s *Session) NewQueue(depth int) (engine.Queue, error) {
	spare := aioq.SpareFor(depth, s.bs)
	backend := C.cbrbd_queue_new(s.image, C.int(max(depth+spare, 1)))
	if backend == nil {
		return nil, errors.New("rbd: out of memory for the aio queue")
	}
	q, err := aioq.New(depth, spare, C.cbrbd_issue_fn(), unsafe.Pointer(backend))
	if err != nil {
		C.cbrbd_queue_free(backend)
		return nil, fmt.Errorf("rbd: %w", err)
	}
	s.queues.Add(1)
	return aioq.NewEngineQueue(q, aioq.Hooks{
		Base: s.base,
		Describe: func(op *engine.Op) string {
			return fmt.Sprintf("image %s/%s at %d", s.target.Conn.Pool, s.target.Image, s.base+op.Offset)
		},
		Closed: func(freed bool) error {
			defer s.queues.Done()
			if freed { // else an op in flight would complete into it
				C.cbrbd_queue_free(backend)
			}
			return nil
		},
	}), nil
}

// Sync flushes librbd's cache: every write completed so far is on the
// OSDs. The image is the session's only file.
func (s *Session) Sync(context.Context, int) error {
	if r := C.cbrbd_flush(s.image); r < 0 {
		return syscall.Errno(-r)
	}
	return nil
}

// Close closes the image, removes it if the session created it and does
// not keep it, and disconnects. It never removes an image it did not
// create.
func (s *Session) Close(context.Context) error {
	s.queues.Wait()
	var err error
	if s.image != nil {
		if r := C.cbrbd_close(s.image); r < 0 {
			err = fmt.Errorf("closing image %s/%s: %w", s.target.Conn.Pool, s.target.Image, syscall.Errno(-r))
		}
		s.image = nil
	}
	if s.created && !s.keep {
		failpoint.Hit(failpoint.Remove)
		if e := rbd.RemoveImage(s.ioctx, s.target.Image); e != nil {
			err = errors.Join(err, fmt.Errorf("removing image %s/%s: %w", s.target.Conn.Pool, s.target.Image, e))
		}
	}
	s.ioctx.Destroy()
	s.shared.Close()
	return err
}

// cleanKept removes the target's image if cephbench created it (a run
// kept it for later steps, or was killed), and the images IMAGE-HOST that
// hosts of a run on several hosts created for themselves; an image it did
// not create stays.
func cleanKept(target spec.Target) error {
	t, err := ParseTarget(target.Location)
	if err != nil {
		return err
	}
	conn, ioctx, err := connect(t, 0)
	if err != nil {
		return err
	}
	defer conn.Shutdown()
	defer ioctx.Destroy()
	names, err := rbd.GetImageNames(ioctx)
	if err != nil {
		return fmt.Errorf("listing the images of pool %s: %w", t.Conn.Pool, err)
	}
	candidates := map[string]bool{t.Image: false}
	for _, n := range names {
		if n == t.Image || strings.HasPrefix(n, t.Image+"-") {
			candidates[n] = true
		}
	}
	errs := []error{cbrados.ReleaseKilledQuiesce(conn)}
	for name, listed := range candidates {
		errs = append(errs, cleanImage(conn, ioctx, name, listed))
	}
	return errors.Join(errs...)
}

// creatingRecord names the object that records, while cephbench creates
// an image, that the image is about to be its own.
func creatingRecord(image string) string { return "cephbench_creating_image." + image }

// cleanImage removes the image name if cephbench created it: it carries
// cephbench's mark, or a creation record it was made just after (a run
// killed before marking it); then the record. An image the pool lists
// (listed) but that cannot be opened is one whose removal was killed half
// way, its header gone: nothing can read it, and removing it again
// finishes the removal.
func cleanImage(conn *rados.Conn, ioctx *rados.IOContext, name string, listed bool) error {
	buf := make([]byte, 512)
	n, err := ioctx.Read(creatingRecord(name), buf, 0)
	stamp, client, _ := strings.Cut(string(buf[:max(n, 0)]), " ")
	recorded := err == nil
	if err != nil && !errors.Is(err, rados.ErrNotFound) {
		return fmt.Errorf("reading %s: %w", creatingRecord(name), err)
	}
	img, err := rbd.OpenImageReadOnly(ioctx, name, rbd.NoSnapshot)
	if errors.Is(err, rbd.ErrNotFound) {
		if listed {
			if err := removeImage(conn, ioctx, name, client); err != nil {
				return err
			}
		}
		return dropCreatingRecord(ioctx, name, recorded)
	}
	if err != nil {
		return err
	}
	_, err = img.GetMetadata(createdKey)
	ours := err == nil
	if !ours && recorded {
		ours = createdAfter(img, stamp)
	}
	img.Close()
	if !ours {
		return dropCreatingRecord(ioctx, name, recorded)
	}
	if err := removeImage(conn, ioctx, name, client); err != nil {
		return err
	}
	return dropCreatingRecord(ioctx, name, recorded)
}

// createdAfter reports whether img was created within a minute of the
// Unix time stamp: a creation record is written just before the image is
// created, on the same host's clock; an image made long after is another's,
// under a name a killed run had meant to use.
func createdAfter(img *rbd.Image, stamp string) bool {
	at, err := strconv.ParseInt(stamp, 10, 64)
	ts, terr := img.GetCreateTimestamp()
	if err != nil || terr != nil {
		return false
	}
	d := ts.Sec - at
	return d >= -60 && d <= 60
}

func dropCreatingRecord(ioctx *rados.IOContext, name string, recorded bool) error {
	if !recorded {
		return nil
	}
	if err := ioctx.Delete(creatingRecord(name)); err != nil && !errors.Is(err, rados.ErrNotFound) {
		return fmt.Errorf("removing %s: %w", creatingRecord(name), err)
	}
	return nil
}
