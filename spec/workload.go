package spec

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Pattern is the order in which a workload visits blocks or objects.
type Pattern string

// The access patterns every engine supports.
const (
	Sequential Pattern = "seq"
	Random     Pattern = "rand"
)

// Target names what a workload runs against: "scheme://location". A string
// without "://" is a local path, served by the file engine.
type Target struct {
	Scheme   string `json:"scheme"`
	Location string `json:"location"`
}

// ParseTarget splits "scheme://location". "/data/x" and "./x" become
// file targets.
func ParseTarget(s string) (Target, error) {
	if strings.TrimSpace(s) == "" {
		return Target{}, errors.New("empty target")
	}
	// A target travels in JSON (results, jobs for other hosts, cleanup),
	// which would change bytes that are not UTF-8 into others.
	if !utf8.ValidString(s) {
		return Target{}, fmt.Errorf("invalid target %q: not UTF-8 text", s)
	}
	scheme, loc, ok := strings.Cut(s, "://")
	if !ok {
		return Target{Scheme: pathScheme, Location: s}, nil
	}
	if scheme == "" || strings.ContainsAny(scheme, "/ ") {
		return Target{}, fmt.Errorf("invalid target %q: bad scheme", s)
	}
	return Target{Scheme: strings.ToLower(scheme), Location: loc}, nil
}

// pathScheme is the scheme of a target written as a bare path.
const pathScheme = "file"

// String is the inverse of ParseTarget.
func (t Target) String() string { return t.Scheme + "://" + t.Location }

// Short is the shortest string ParseTarget reads back as t: a local path
// without its scheme, as users write it.
func (t Target) Short() string {
	if t.Scheme == pathScheme && t.Location != "" && !strings.Contains(t.Location, "://") {
		return t.Location
	}
	return t.String()
}

// Workload is one benchmark step: what to do, how much of it, how
// concurrently and for how long. The zero value of each optional field
// means "not set". Validate checks it before any I/O.
type Workload struct {
	Name   string `json:"name,omitempty"`
	Target Target `json:"target"`

	// Pattern and ReadPercent make the operation mix: ReadPercent of the
	// operations read, the rest write. For object targets a sequential
	// write creates new objects one after another, like rados bench write.
	Pattern     Pattern `json:"pattern"`
	ReadPercent int     `json:"read_percent"`
	// Mix, when set, draws each op's kind at its shares instead of
	// ReadPercent's, over a changing set of whole objects of BlockSize
	// (object targets only): puts add objects, deletes remove ones no op
	// reads, gets and stats pick live ones. Objects then bounds how many
	// objects the puts create.
	Mix OpMix `json:"op_mix,omitempty"`

	// BlockSize is the size of one operation, or of the longest.
	BlockSize Size `json:"block_size"`
	// MinBlockSize, when set, makes operations vary in length: each one's
	// is uniform in [MinBlockSize, BlockSize] (fio's bsrange, rados
	// load-gen's --min-op-len and --max-op-len). Offsets still step by
	// BlockSize.
	MinBlockSize Size `json:"min_block_size,omitempty"`
	// BlockSizes, when set, draws each op's size from it, per direction
	// (fio's bssplit, bsrange, bs=READ,WRITE), on block and file targets;
	// BlockSize must then be its largest size, which buffers hold. Drawn
	// sizes are rounded down to a multiple of the direction's smallest
	// unless BlockUnaligned. A sequential op starts where the last one of
	// its direction ended.
	BlockSizes     BlockSizes `json:"block_sizes,omitempty"`
	BlockUnaligned bool       `json:"block_unaligned,omitempty"`
	// BlockAlign, when set, makes random offsets multiples of it instead
	// of the direction's smallest size (fio's blockalign).
	BlockAlign Size `json:"block_align,omitempty"`
	// SeqSkip leaves a hole of this many bytes after each sequential op,
	// or goes backwards when negative, wrapping at the region's ends
	// (fio's rw=write:4k). Bytes, not a Size, which cannot be negative.
	SeqSkip int64 `json:"seq_skip,omitempty"`
	// NewOffsetEvery makes a random workload draw a new offset only every
	// this many ops; those between follow the last sequentially, or
	// repeat its offset when RepeatOffset (fio's rw=randread:8 and
	// rw_sequencer=identical).
	NewOffsetEvery int  `json:"new_offset_every,omitempty"`
	RepeatOffset   bool `json:"repeat_offset,omitempty"`
	// ObjectSize is the size of each object on object targets; an object
	// is written in ObjectSize/BlockSize operations. Zero means BlockSize.
	ObjectSize Size `json:"object_size,omitempty"`
	// MinObjectSize, when set, makes the Objects objects a prepared set
	// of sizes uniform in [MinObjectSize, ObjectSize], each its own (rados
	// load-gen's objects). The engine that holds the set reports the
	// sizes in its geometry, and each op addresses a random byte range
	// of a random object, its length cut to the object's size.
	MinObjectSize Size `json:"min_object_size,omitempty"`
	// OffsetAlign rounds the offsets of ops in a set of objects of their
	// own sizes down to a multiple of it; zero leaves them at any byte.
	OffsetAlign Size `json:"offset_align,omitempty"`
	// Objects bounds the objects used: how many a write creates at most,
	// and the key space of random object I/O. Zero: unbounded writes, and
	// reads use every object the target already holds.
	Objects int64 `json:"objects,omitempty"`
	// Cycle makes sequential object writes start over at the first object
	// after Objects, rewriting them, so a time-bound write keeps measuring
	// with a bounded footprint instead of stopping at the limit.
	Cycle bool `json:"cycle,omitempty"`
	// FileSize is the region a block or file workload addresses, per file.
	// Zero means the size of an existing file or device.
	FileSize Size `json:"file_size,omitempty"`
	// FilesPerWorker, when over 1, gives each worker that many files of
	// its own in a directory target (fio's nrfiles), FileService saying
	// how it moves between them (see ParseFileService). MinFileSize, when
	// set, makes each file's size its own, drawn uniform in [MinFileSize,
	// FileSize] and rounded down to whole blocks (fio's filesize=LOW-HIGH;
	// see workload.FileSize); the region then runs from the worker's
	// offset to its file's end.
	FilesPerWorker int    `json:"files_per_worker,omitempty"`
	FileService    string `json:"file_service,omitempty"`
	MinFileSize    Size   `json:"min_file_size,omitempty"`
	// Offset is where the region of each worker starts in its file, and
	// OffsetIncrement moves worker N's on by N times it (fio's offset and
	// offset_increment): worker N addresses FileSize bytes (or the rest
	// of its file) from Offset+N*OffsetIncrement, and new files are laid
	// out to hold every worker's region.
	Offset          Size `json:"offset,omitempty"`
	OffsetIncrement Size `json:"offset_increment,omitempty"`
	// OffsetPercent, when set, starts the regions at this percentage of
	// their file's size instead of at Offset, rounded down to a block;
	// SizePercent makes each region this percentage of its file's size
	// (fio's offset=N% and size=N%). They are for files that exist, or
	// devices: FileSize, if any, is then the files' size, not a region's.
	OffsetPercent int `json:"offset_percent,omitempty"`
	SizePercent   int `json:"size_percent,omitempty"`
	// Distribution is how random offsets spread over a worker's region,
	// in fio's random_distribution syntax (see ParseDistribution); empty
	// is uniform.
	Distribution string `json:"distribution,omitempty"`
	// RandomMap makes random offsets visit every block of a worker's
	// region once per pass, in an order drawn from the run's seed, as fio
	// does unless norandommap; unset, each offset is drawn independently,
	// so some blocks are hit twice and others not at all in a pass.
	RandomMap bool `json:"random_map,omitempty"`

	// Workers run in parallel, each keeping QueueDepth operations in flight.
	Workers    int `json:"workers"`
	QueueDepth int `json:"queue_depth"`

	// The run stops at the first bound reached; at least one is required.
	// Ops start while fewer than TotalBytes have, so when their sizes vary
	// the last may pass it, as in fio.
	Duration   Duration `json:"duration,omitempty"`
	TotalBytes Size     `json:"total_bytes,omitempty"`
	TotalOps   int64    `json:"total_ops,omitempty"`
	// BoundsPerWorker splits TotalBytes and TotalOps among the workers,
	// in proportion to their regions on a block target and evenly
	// otherwise, each stopping at its own share, as each of fio's clones
	// does its own size: a worker that runs ahead does not take a slower
	// one's share (nor start its next pass over its region before the
	// other ends its first). The run ends once every worker has done its
	// share. Only measured ops count, as for the run's bounds.
	BoundsPerWorker bool `json:"bounds_per_worker,omitempty"`
	// Ramp is run before the measured period and excluded from every figure.
	Ramp Duration `json:"ramp,omitempty"`
	// RateIOPS, when set, paces the operations open loop at this many per
	// second in total: latency counts from each operation's scheduled time.
	RateIOPS float64 `json:"rate_iops,omitempty"`
	// RateBytes, when set, paces the operations open loop at this many
	// bytes per second in total: an operation is due when the bytes of
	// those before it are, and its latency counts from then.
	RateBytes float64 `json:"rate_bytes,omitempty"`
	// ReadRate and WriteRate pace reads and writes each on its own
	// schedule, in total over the workers (fio's rate=r,w and
	// rate_iops=r,w): a mixed workload issues whichever kind is due, so
	// its mix follows the rates rather than ReadPercent. A direction
	// without a rate is unpaced. They exclude RateIOPS and RateBytes.
	// Their minimums fail the run, whether paced or not.
	ReadRate  DirRate `json:"read_rate,omitzero"`
	WriteRate DirRate `json:"write_rate,omitzero"`
	// RateCycle is the period a direction's rate is averaged over to
	// compare with its minimum (fio's ratecycle); zero is one second.
	RateCycle Duration `json:"rate_cycle,omitempty"`
	// RateProcess spaces paced ops: "" or "linear" evenly, "poisson" at
	// exponential intervals of the same mean, drawn from the run's seed
	// (fio's rate_process).
	RateProcess string `json:"rate_process,omitempty"`
	// MaxBacklog, when set, bounds the bytes in flight: no operation
	// starts while this many are (rados load-gen's --max-backlog).
	MaxBacklog Size `json:"max_backlog,omitempty"`
	// OpTimeout fails an operation that takes longer; zero waits forever.
	OpTimeout Duration `json:"op_timeout,omitempty"`
	// SteadyState, when set, also ends the run once its rate holds
	// steady by that criterion.
	SteadyState *SteadyState `json:"steady_state,omitempty"`
	// StopOnError ends the run at the first failed op of the kinds it
	// lists, comma-separated: read, write (syncs too) and verify (a read
	// whose data was wrong), or all. Empty: failed ops are counted and
	// the run goes on.
	StopOnError string `json:"stop_on_error,omitempty"`
	// ThinkTime makes each worker pause this long after every ThinkEvery
	// (at least 1) of its ops complete, its ops in flight completed
	// first, as fio's thinktime and thinktime_blocks; ThinkSpin of the
	// pause is spent busy on a processor rather than asleep
	// (thinktime_spin). The pauses are part of the measured time.
	ThinkTime  Duration `json:"think_time,omitempty"`
	ThinkEvery int64    `json:"think_every,omitempty"`
	ThinkSpin  Duration `json:"think_spin,omitempty"`

	// BufferMemory is the memory the run's I/O buffers are in, one of
	// BufferMemories, as fio's mem=: "" is "malloc", ordinary pages, fio's
	// default. A 1 MiB direct I/O from one huge page costs the kernel far
	// less than from 256 small ones, so two runs compare only with the
	// same. A result records the kind its run used.
	BufferMemory string `json:"buffer_memory,omitempty"`
	// HugepageSize is the huge page size of mmaphuge and shmhuge (fio's
	// hugepage-size); 0 is the system's default.
	HugepageSize Size `json:"hugepage_size,omitempty"`
	// BufferAlign starts each buffer at a multiple of it (fio's
	// iomem_align), a power of two; 0: the target's alignment for direct
	// I/O, else a cache line.
	BufferAlign Size `json:"buffer_align,omitempty"`

	// FsyncEvery makes each worker sync its file after every this many of
	// its writes complete (fio's fsync=); EndFsync syncs every file once
	// the writes end, within the measured time (fio's end_fsync). Both
	// need a target that can sync, and are timed as "sync" ops.
	FsyncEvery int  `json:"fsync_every,omitempty"`
	EndFsync   bool `json:"end_fsync,omitempty"`

	// FilePrefix names the per-worker files of a directory target
	// PREFIX.N.0, as fio names a job's JOBNAME.N.0; empty means
	// cephbench.N.dat. Only engines that declare file prefixes take it,
	// which engine.Open checks.
	FilePrefix string `json:"file_prefix,omitempty"`
	// FileNameFormat, when set, names a directory target's files instead,
	// in fio's filename_format syntax: $jobname is FilePrefix, $jobnum the
	// worker, $filenum the worker's file, $clientuid nothing (fio's is
	// its client's address, empty outside client/server mode).
	FileNameFormat string `json:"file_name_format,omitempty"`

	// IOEngine is how a file target is driven: "" or "psync" (one blocking
	// pread/pwrite per op and slot), "libaio" or "io_uring" (QueueDepth
	// ops in flight on one file descriptor per worker, in the kernel).
	// Which values a target takes is its engine's to declare, and
	// engine.Open checks it; others take only "".
	IOEngine string `json:"io_engine,omitempty"`
	// SubmitBatch is how many ops a kernel queue (libaio, io_uring)
	// gathers before it hands them to the kernel in one system call, as
	// fio's iodepth_batch_submit; those gathered when the worker waits for
	// a completion go then. 0 is 1: each op goes as it is queued, fio's
	// default, which keeps a device fed evenly; more saves system calls
	// where each costs a trip to a hypervisor. At most QueueDepth.
	SubmitBatch int `json:"submit_batch,omitempty"`

	Direct bool `json:"direct,omitempty"` // O_DIRECT where the engine has it
	Verify bool `json:"verify,omitempty"` // check read data against what was written
	Keep   bool `json:"keep,omitempty"`   // leave created files and objects in place
	Force  bool `json:"force,omitempty"`  // write over data in use (devices with signatures)

	// VerifyWrites makes a write-only workload read back, once its writes
	// end (not when interrupted), every op each worker wrote, in the order
	// written, checking the data as Verify does: fio's verify phase. The
	// reads are unpaced and past the bounds, and count as the run's reads.
	VerifyWrites bool `json:"verify_writes,omitempty"`
	// VerifyBacklog makes such a workload also read back as it goes, as
	// fio's verify_backlog: whenever the writes not yet read back number a
	// multiple of it, each worker reads back the oldest VerifyBacklogBatch
	// of them (0: VerifyBacklog). Every write is still read back once; the
	// reads back after the writes end read only what is left. Reads back
	// do not count towards the size or op bound.
	VerifyBacklog      int64 `json:"verify_backlog,omitempty"`
	VerifyBacklogBatch int64 `json:"verify_backlog_batch,omitempty"`
}

// BacklogBatch is how many writes a worker reads back at a time when
// VerifyBacklog is set.
func (w *Workload) BacklogBatch() int64 {
	if w.VerifyBacklogBatch > 0 {
		return w.VerifyBacklogBatch
	}
	return w.VerifyBacklog
}

// fileServiceError checks FileService.
func (w *Workload) fileServiceError() error {
	_, _, err := ParseFileService(w.FileService)
	return err
}

// Extent is the size a target that every worker shares must have to hold
// their regions of FileSize bytes from their offsets; 0 when FileSize is
// unset.
func (w *Workload) Extent() Size {
	if w.FileSize == 0 {
		return 0
	}
	return w.Offset + Size(max(w.Workers-1, 0))*w.OffsetIncrement + w.FileSize
}

// Region is where worker addresses a file of fileSize bytes: length bytes
// from start, in whole blocks, or any length when op sizes vary or
// sequential ops leave holes (as fio's regions then are); length is 0
// when not one block fits.
func (w *Workload) Region(worker int, fileSize int64) (start, length int64) {
	bs := int64(w.BlockSize)
	start = int64(w.Offset)
	if w.OffsetPercent > 0 {
		start = fileSize * int64(w.OffsetPercent) / 100
		start -= start % bs
	}
	start += int64(worker) * int64(w.OffsetIncrement)
	length = fileSize - start
	switch {
	case w.SizePercent > 0:
		length = min(length, fileSize*int64(w.SizePercent)/100)
	case w.FileSize > 0 && w.MinFileSize == 0 && w.OffsetPercent == 0:
		length = min(length, int64(w.FileSize))
	}
	if w.BlockSizes != "" || w.SeqSkip != 0 {
		bs = 1
	}
	return start, max(length-length%bs, 0)
}

// MinRegion is the fewest bytes a worker's region must hold: an op of
// each direction's smallest size.
func (w *Workload) MinRegion() Size {
	r, wr, err := w.BlockSizes.Directions()
	if w.BlockSizes == "" || err != nil {
		return w.BlockSize
	}
	return max(r.Min, wr.Min)
}

// distributionError checks Distribution and how it goes with the rest.
func (w *Workload) distributionError() error {
	d, err := ParseDistribution(w.Distribution)
	switch {
	case err != nil:
		return err
	case d.Kind != DistRandom && w.RandomMap:
		return errRandomMapDistribution
	case d.Kind == DistZonedAbs && w.FileSize > 0:
		var span int64
		for _, z := range d.Zones {
			span += z.Span
		}
		if span > int64(w.FileSize) {
			return fmt.Errorf("zoned_abs: the zones span %s, more than the file size %s", Size(span), w.FileSize)
		}
	}
	return nil
}

// DirRate is the pace and the floor of one direction's operations, each
// zero when not set: at most IOPS ops or Bytes bytes per second (one of
// them), and at least MinIOPS ops or MinBytes bytes per second averaged
// over each RateCycle once the run has settled for two seconds, as fio
// checks rate_iops_min and rate_min.
type DirRate struct {
	IOPS     float64 `json:"iops,omitempty"`
	Bytes    float64 `json:"bytes,omitempty"`
	MinIOPS  float64 `json:"min_iops,omitempty"`
	MinBytes float64 `json:"min_bytes,omitempty"`
}

// Paced reports whether the direction has a rate to keep.
func (d DirRate) Paced() bool { return d.IOPS > 0 || d.Bytes > 0 }

// HasMin reports whether the direction has a minimum rate.
func (d DirRate) HasMin() bool { return d.MinIOPS > 0 || d.MinBytes > 0 }

func (d DirRate) check(dir string) error {
	switch {
	case d.IOPS < 0 || d.Bytes < 0 || d.MinIOPS < 0 || d.MinBytes < 0:
		return fmt.Errorf("invalid %s rate: negative", dir)
	case d.IOPS > 0 && d.Bytes > 0:
		return fmt.Errorf("a %s rate in operations and one in bytes: pace by one of them", dir)
	case d.MinIOPS > 0 && d.MinBytes > 0:
		return fmt.Errorf("a minimum %s rate in operations and one in bytes: give one of them", dir)
	}
	return nil
}

// ScaleRates multiplies every rate and minimum rate by f: a share of
// a workload split over hosts, or none of it (f 0).
func (w *Workload) ScaleRates(f float64) {
	w.RateIOPS *= f
	w.RateBytes *= f
	for _, d := range []*DirRate{&w.ReadRate, &w.WriteRate} {
		d.IOPS, d.Bytes, d.MinIOPS, d.MinBytes = d.IOPS*f, d.Bytes*f, d.MinIOPS*f, d.MinBytes*f
	}
}

// AddRates adds o's rates and minimum rates to w's: the workload of
// hosts that each ran a share.
func (w *Workload) AddRates(o *Workload) {
	w.RateIOPS += o.RateIOPS
	w.RateBytes += o.RateBytes
	for i, d := range []*DirRate{&w.ReadRate, &w.WriteRate} {
		od := []DirRate{o.ReadRate, o.WriteRate}[i]
		d.IOPS, d.Bytes, d.MinIOPS, d.MinBytes = d.IOPS+od.IOPS, d.Bytes+od.Bytes, d.MinIOPS+od.MinIOPS, d.MinBytes+od.MinBytes
	}
}

// rateError is the first problem with the workload's rates, or nil.
func (w *Workload) rateError() error {
	perDir := w.ReadRate.Paced() || w.WriteRate.Paced()
	switch {
	case w.RateIOPS < 0:
		return fmt.Errorf("invalid rate %g: negative", w.RateIOPS)
	case w.RateBytes < 0:
		return fmt.Errorf("invalid byte rate %g: negative", w.RateBytes)
	case w.RateIOPS > 0 && w.RateBytes > 0:
		return errors.New("a rate in operations and one in bytes: pace by one of them")
	case perDir && (w.RateIOPS > 0 || w.RateBytes > 0):
		return errors.New("a total rate and rates per direction: pace by one of them")
	case (perDir || w.ReadRate.HasMin() || w.WriteRate.HasMin()) && w.Mix != "":
		return errors.New("rates per direction apply to reads and writes, not to an op mix")
	case w.RateCycle < 0:
		return fmt.Errorf("invalid rate cycle %s: negative", w.RateCycle)
	case w.RateProcess != "" && w.RateProcess != "linear" && w.RateProcess != "poisson":
		return fmt.Errorf("invalid rate process %q (want linear or poisson)", w.RateProcess)
	}
	if err := w.ReadRate.check("read"); err != nil {
		return err
	}
	return w.WriteRate.check("write")
}

// Writes reports whether the workload issues any write.
func (w *Workload) Writes() bool { return w.ReadPercent < 100 }

// Reads reports whether the workload issues any read.
func (w *Workload) Reads() bool { return w.ReadPercent > 0 }

// BoundToPasses sets the byte bound to passes passes over a target of
// size bytes, each pass rounded down to whole blocks, as fio bounds a job
// that gives no size; then it validates the workload.
func (w *Workload) BoundToPasses(size Size, passes int64) error {
	bs := w.BlockSize
	if bs <= 0 || size < bs {
		return fmt.Errorf("the target's %d bytes do not hold one block of %s", size, bs)
	}
	pass := int64(size / bs * bs)
	if w.Workers > 0 && passes%int64(w.Workers) == 0 {
		// Each worker's pass is over its own region: the sum of theirs
		// is a pass of them all.
		pass = 0
		for worker := range w.Workers {
			_, n := w.Region(worker, int64(size))
			pass += n
		}
		passes /= int64(w.Workers)
		if pass == 0 {
			return fmt.Errorf("the target's %d bytes leave no region of a %s block", size, bs)
		}
	}
	passes = max(passes, 1)
	if pass > (1<<62)/passes {
		return fmt.Errorf("%d passes over %d bytes is out of range", passes, pass)
	}
	w.TotalBytes = Size(pass * passes)
	return w.Validate()
}

// EffectiveObjectSize is ObjectSize, or BlockSize when that is unset.
func (w *Workload) EffectiveObjectSize() Size {
	if w.ObjectSize > 0 {
		return w.ObjectSize
	}
	return w.BlockSize
}

// Validate reports the first problem with the workload as an error that
// names the field, or nil. It does no I/O. What depends on the target's
// engine (its I/O engines, file prefixes) engine.Open checks.
func (w *Workload) Validate() error {
	switch {
	case w.Target.Scheme == "":
		return errors.New("no target given")
	case w.Pattern != Sequential && w.Pattern != Random:
		return fmt.Errorf("invalid pattern %q (want seq or rand)", w.Pattern)
	case w.ReadPercent < 0 || w.ReadPercent > 100:
		return fmt.Errorf("invalid read percentage %d (want 0..100)", w.ReadPercent)
	case w.Mix.mixError() != nil:
		return w.Mix.mixError()
	case w.BlockSize <= 0:
		return fmt.Errorf("invalid block size %d: must be positive", w.BlockSize)
	case w.BlockSize > 1<<30:
		return fmt.Errorf("block size %s is over the 1G limit", w.BlockSize)
	case w.ObjectSize < 0:
		return fmt.Errorf("invalid object size %d", w.ObjectSize)
	case w.MinBlockSize < 0 || w.MinBlockSize > w.BlockSize:
		return fmt.Errorf("invalid minimum block size %d (want 1..%s, the block size)", w.MinBlockSize, w.BlockSize)
	case w.ObjectSize > 0 && w.MinObjectSize == 0 && w.ObjectSize%w.BlockSize != 0:
		return fmt.Errorf("object size %s is not a multiple of block size %s", w.ObjectSize, w.BlockSize)
	case w.MinObjectSize < 0 || w.MinObjectSize > w.EffectiveObjectSize():
		return fmt.Errorf("invalid minimum object size %d (want 1..%s, the object size)", w.MinObjectSize, w.EffectiveObjectSize())
	case w.MinObjectSize > 0 && w.Objects == 0:
		return errors.New("objects of their own sizes need an object count")
	case w.OffsetAlign < 0:
		return fmt.Errorf("invalid offset alignment %d: negative", w.OffsetAlign)
	case w.VerifyWrites && (w.Reads() || w.Mix != ""):
		return errors.New("reading back what was written is for write-only workloads: reads are verified as they come")
	case w.VerifyBacklog < 0 || w.VerifyBacklogBatch < 0:
		return fmt.Errorf("invalid verify backlog %d or batch %d: negative", w.VerifyBacklog, w.VerifyBacklogBatch)
	case (w.VerifyBacklog > 0 || w.VerifyBacklogBatch > 0) && !w.VerifyWrites:
		return errors.New("a verify backlog is for a write-only workload that reads back what it wrote (verify_writes)")
	case w.VerifyBacklogBatch > 0 && w.VerifyBacklog == 0:
		return errors.New("a verify backlog batch needs a verify backlog")
	case (w.Verify || w.VerifyWrites) && w.MinObjectSize > 0:
		return errors.New("reads of objects of their own sizes cannot be verified: their ops address any byte range, not the blocks writes stamp")
	case w.Objects < 0:
		return fmt.Errorf("invalid object count %d", w.Objects)
	case w.Cycle && w.Objects == 0:
		return errors.New("cycling writes need an object count")
	case w.FileSize < 0:
		return fmt.Errorf("invalid file size %d", w.FileSize)
	case w.FileSize > 0 && w.FileSize < w.BlockSize && w.BlockSizes == "":
		return fmt.Errorf("file size %s is smaller than block size %s", w.FileSize, w.BlockSize)
	case w.FilesPerWorker < 0 || w.FilesPerWorker > 1<<16:
		return fmt.Errorf("invalid file count %d per worker (want 1..65536)", w.FilesPerWorker)
	case w.MinFileSize < 0 || w.MinFileSize > w.FileSize || w.MinFileSize > 0 && w.MinFileSize < w.BlockSize:
		return fmt.Errorf("invalid minimum file size %d (want %s..%s, the block and the file size)", w.MinFileSize, w.BlockSize, w.FileSize)
	case w.fileServiceError() != nil:
		return w.fileServiceError()
	case w.OffsetPercent < 0 || w.OffsetPercent > 99 || w.SizePercent < 0 || w.SizePercent > 100:
		return fmt.Errorf("invalid offset percentage %d or size percentage %d (want 0..99 and 0..100)", w.OffsetPercent, w.SizePercent)
	case w.Offset < 0 || w.OffsetIncrement < 0:
		return fmt.Errorf("invalid offset %d or offset increment %d: negative", w.Offset, w.OffsetIncrement)
	case w.distributionError() != nil:
		return w.distributionError()
	case w.Workers < 1:
		return fmt.Errorf("invalid worker count %d: must be at least 1", w.Workers)
	case w.Workers > 4096:
		return fmt.Errorf("worker count %d is over the 4096 limit", w.Workers)
	case w.QueueDepth < 1:
		return fmt.Errorf("invalid queue depth %d: must be at least 1", w.QueueDepth)
	case w.QueueDepth > 65536:
		return fmt.Errorf("queue depth %d is over the 65536 limit", w.QueueDepth)
	case w.SubmitBatch < 0 || w.SubmitBatch > w.QueueDepth:
		return fmt.Errorf("invalid submit batch %d: want 0 to the queue depth, %d", w.SubmitBatch, w.QueueDepth)
	case w.SubmitBatch > 1 && w.IOEngine != "libaio" && w.IOEngine != "io_uring":
		return fmt.Errorf("a submit batch of %d needs a kernel queue (I/O engine libaio or io_uring)", w.SubmitBatch)
	case w.Duration <= 0 && w.TotalBytes <= 0 && w.TotalOps <= 0:
		return errors.New("no bound: give a duration, a total size or an operation count")
	case w.TotalBytes < 0 || w.TotalOps < 0:
		return errors.New("negative total")
	case w.FsyncEvery < 0:
		return fmt.Errorf("invalid fsync interval %d: negative", w.FsyncEvery)
	case w.rateError() != nil:
		return w.rateError()
	case w.MaxBacklog < 0:
		return fmt.Errorf("invalid backlog %d: negative", w.MaxBacklog)
	case w.SteadyState != nil && w.SteadyState.Validate() != nil:
		return w.SteadyState.Validate()
	case w.ThinkTime < 0 || w.ThinkSpin < 0 || w.ThinkSpin > w.ThinkTime || w.ThinkEvery < 0:
		return fmt.Errorf("invalid think time %s, spin %s, every %d ops (want the spin within the time)", w.ThinkTime, w.ThinkSpin, w.ThinkEvery)
	case !slices.Contains(BufferMemories, w.BufferMemory) && w.BufferMemory != "":
		return fmt.Errorf("invalid buffer memory %q: want %s", w.BufferMemory, strings.Join(BufferMemories, ", "))
	case w.HugepageSize < 0 || w.HugepageSize&(w.HugepageSize-1) != 0:
		return fmt.Errorf("invalid huge page size %s: want a power of two", w.HugepageSize)
	case w.BufferAlign < 0 || w.BufferAlign&(w.BufferAlign-1) != 0:
		return fmt.Errorf("invalid buffer alignment %s: want a power of two", w.BufferAlign)
	case badStopOnError(w.StopOnError) != nil:
		return badStopOnError(w.StopOnError)
	case strings.ContainsRune(w.FileNameFormat, '/'):
		return fmt.Errorf("invalid file name format %q: it names files inside the directory", w.FileNameFormat)
	case strings.ContainsRune(w.FilePrefix, '/') || w.FilePrefix == "." || w.FilePrefix == "..":
		return fmt.Errorf("invalid file prefix %q: it names files inside the directory", w.FilePrefix)
	case w.Direct && (w.BlockSize%512 != 0 || w.MinBlockSize%512 != 0):
		return fmt.Errorf("block size %s is not a multiple of 512, which direct I/O needs", w.BlockSize)
	}
	return w.validateSizes()
}

// validateSizes checks the fields that vary op sizes and offsets.
func (w *Workload) validateSizes() error {
	varied := w.BlockSizes != "" || w.SeqSkip != 0 || w.NewOffsetEvery > 1 || w.RepeatOffset || w.BlockAlign != 0
	switch {
	case w.BlockAlign < 0:
		return fmt.Errorf("invalid block alignment %d: negative", w.BlockAlign)
	case w.NewOffsetEvery < 0:
		return fmt.Errorf("invalid count of ops per random offset %d: negative", w.NewOffsetEvery)
	case varied && w.Verify:
		return errors.New("reads of ops of varied sizes or offsets cannot be verified: verification checks the blocks writes stamp at whole block offsets")
	case varied && w.MinBlockSize > 0:
		return errors.New("a minimum block size and block sizes per direction: give one of them")
	case w.RandomMap && (w.BlockSizes != "" || w.BlockAlign != 0 && w.BlockAlign != w.BlockSize):
		return errors.New("a random map visits whole blocks of one size: it takes no block sizes per direction nor another block alignment")
	case w.Direct && w.BlockAlign%512 != 0:
		return fmt.Errorf("block alignment %s is not a multiple of 512, which direct I/O needs", w.BlockAlign)
	case w.BlockSizes == "":
		return nil
	}
	r, wr, err := w.BlockSizes.Directions()
	if err != nil {
		return fmt.Errorf("invalid block sizes %q: %v", w.BlockSizes, err)
	}
	if largest := max(r.Max, wr.Max); largest != w.BlockSize {
		return fmt.Errorf("block size %s is not the largest of block sizes %q, %s", w.BlockSize, w.BlockSizes, largest)
	}
	for _, d := range []SizeDist{r, wr} {
		if w.Direct && (d.Min%512 != 0 || w.BlockUnaligned && !d.Fixed()) {
			return fmt.Errorf("block sizes %q are not all multiples of 512, which direct I/O needs", w.BlockSizes)
		}
		if w.FileSize > 0 && w.FileSize < d.Min {
			return fmt.Errorf("file size %s is smaller than the smallest block size %s", w.FileSize, d.Min)
		}
	}
	return nil
}

// SetBlockSizes sets the op sizes from "4k", a split "4k/10:64k/90", a
// range "1k-4k" or per direction "READS,WRITES": BlockSize to the largest,
// BlockSizes to s unless every op has one size. Errors name the text.
func (w *Workload) SetBlockSizes(s string) error {
	r, wr, err := BlockSizes(s).Directions()
	if err != nil {
		return fmt.Errorf("invalid block sizes %q: %v", s, err)
	}
	w.BlockSize, w.BlockSizes = max(r.Max, wr.Max), BlockSizes(s)
	if r.Fixed() && wr.Fixed() && r.Max == wr.Max {
		w.BlockSizes = ""
	}
	return nil
}

// StopsOnError reports whether a failed op of kind ("read", "write",
// "sync"), verify failures aside, or a failed verification when verify,
// ends the run by StopOnError.
func (w *Workload) StopsOnError(kind string, verify bool) bool {
	if verify {
		kind = "verify"
	} else if kind == "sync" {
		kind = "write"
	}
	for _, k := range strings.Split(w.StopOnError, ",") {
		if k = strings.TrimSpace(k); k == "all" || k == kind {
			return true
		}
	}
	return false
}

// badStopOnError says which kind StopOnError names is none, or nil.
func badStopOnError(s string) error {
	if s == "" {
		return nil
	}
	for _, k := range strings.Split(s, ",") {
		switch strings.TrimSpace(k) {
		case "read", "write", "verify", "all":
		default:
			return fmt.Errorf("invalid stop on error %q: %q is not read, write, verify or all", s, k)
		}
	}
	return nil
}

// BufferMemories are the kinds of memory a run's buffers can be in: fio's
// mem= kinds, and thp. malloc and mmap are private anonymous memory in
// ordinary pages (transparent huge pages only where the system gives them
// unasked); mmapshared is shared anonymous memory; mmaphuge and shmhuge are
// huge pages the system has reserved (vm.nr_hugepages), mapped or System V
// shared memory; shm is System V shared memory in ordinary pages; thp is
// private memory advised to the kernel as transparent huge pages.
var BufferMemories = []string{"malloc", "mmap", "mmapshared", "mmaphuge", "shm", "shmhuge", "thp"}

// Buffers is the kind of memory the run's buffers are in: BufferMemory, or
// malloc when it is empty.
func (w *Workload) Buffers() string {
	if w.BufferMemory == "" {
		return "malloc"
	}
	return w.BufferMemory
}
