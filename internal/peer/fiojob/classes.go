package fiojob

import (
	"fmt"
	"slices"
	"strings"
)

// Every fio 3.33 job option (fioOptionNames, aliases included) is in
// exactly one class, which TestOptionClasses checks:
//
//   - supported: in table, mapped onto the workload or fio's output;
//   - matching: in matching, accepted with the values that describe what
//     cephbench does anyway, refused with any other;
//   - no-op: in noops, tuning only fio itself, so that ignoring it changes
//     nothing cephbench measures; accepted, and named in one note a run;
//   - refused: in refused, with the reason its one-line error gives.
//
// Supporting an option is adding it to table and removing it from here.
// The README's list of options is generated from these
// (go test ./internal/peer/fiojob -run TestREADME -update).

// noops are fio's options that tune fio's own process (its clocks, CPUs,
// threads), what statistics it keeps or prints, or
// nothing at all (deprecated), with how they take their value. cephbench
// measures the same with or without them.
var noops = func() map[string]argKind {
	m := map[string]argKind{}
	for _, n := range noopList {
		m[n.name] = n.arg
	}
	return m
}()

// noopList is noops one a line.
var noopList = []struct {
	name string
	arg  argKind
}{
	{"allow_mounted_write", boolean}, // cephbench's own guard is --force
	{"allrandrepeat", boolean},       // the data is cephbench's; offsets follow randrepeat
	{"bwavgtime", needsValue},
	{"clocksource", needsValue},
	{"cpumask", needsValue},
	{"cpus_allowed", needsValue},
	{"cpus_allowed_policy", needsValue},
	{"create_fsync", boolean},
	{"create_on_open", boolean},
	{"create_serialize", boolean},
	{"disable_bw", boolean},
	{"disable_bw_measurement", boolean},
	{"disable_clat", boolean},
	{"disable_lat", boolean},
	{"disable_slat", boolean},
	{"disk_util", boolean},
	{"error_dump", boolean},
	{"experimental_verify", boolean},
	{"fallocate", needsValue},      // cephbench lays files out by writing them
	{"flow_watermark", needsValue}, // deprecated
	{"gtod_cpu", needsValue},
	{"gtod_reduce", boolean},
	{"invalidate", boolean}, // cephbench never drops the page cache: use direct=1
	{"iopsavgtime", needsValue},
	{"numa_cpu_nodes", needsValue},
	{"numa_mem_policy", needsValue},
	{"percentage_sequential", needsValue}, // deprecated
	{"rwmixcycle", needsValue},            // deprecated
	{"significant_figures", needsValue},
	{"softrandommap", boolean},
	{"stats", boolean},
	{"thread", flag}, // cephbench runs goroutines either way
	// tiobench's thread count, which fio takes and ignores in a job
	// without profile=tiobench (its steadystate and waitfor examples)
	{"threads", needsValue},
	{"touch_objects", boolean},
	{"verify_async", needsValue},
	{"verify_async_cpus", needsValue},
	{"verify_dump", boolean},
	{"verify_interval", needsValue}, // where fio's own header goes: cephbench's data has its own
	{"verify_offset", needsValue},
	{"verify_state_save", boolean},
	{"verifysort", boolean}, // deprecated
	{"verifysort_nr", needsValue},
}

// matching are fio options cephbench takes only with the values that say
// what it does anyway.
var matching = []struct {
	name   string
	arg    argKind
	values []string // the accepted values; booleans as "0" or "1"
	why    string   // why the others are refused
}{
	{"allow_file_create", boolean, []string{"1"}, "cephbench creates the files a job needs"},
	{"fadvise_hint", needsValue, []string{"0"}, "cephbench gives the kernel no fadvise hints"},
	{"io_submit_mode", needsValue, []string{"inline"}, "cephbench's workers submit their own I/O"},
	{"lockfile", needsValue, []string{"none"}, "cephbench takes no file locks"},
	{"sync", needsValue, []string{"0", "none"}, "cephbench opens files without O_SYNC or O_DSYNC; use fsync=1"},
	{"unit_base", needsValue, []string{"0", "8"}, "cephbench prints bytes, not bits"},
	{"verify_fatal", boolean, []string{"0"}, "cephbench checks every block read back and counts those that fail"},
}

// Reasons shared by many refused options.
const (
	otherEngine = "an option of a fio engine cephbench does not run (it runs psync, libaio, io_uring, null, rbd and rados)"
	noTrims     = "trims are not supported: cephbench's engines read and write"
	noZones     = "zoned block devices are not supported"
	ownData     = "cephbench writes its own verifiable data: the same pseudo-random block, with a header naming it"
	noIOLogs    = "replaying or recording I/O logs is not supported"
	noLogs      = "fio's log files are not written yet"
	oneSize     = "not supported yet: cephbench uses one block size per job"
	noProcess   = "cephbench runs as one process and does not change its user, group, cgroup or priority"
	uringOpt    = "cephbench's io_uring engine does not use it, which changes what is measured"
	noCPUJob    = "cephbench runs no CPU-burning jobs"
)

// refused are fio's options that would change what is measured and that
// cephbench does not honour, each with why.
var refused = func() map[string]string {
	m := map[string]string{}
	for _, r := range refusedList {
		m[r.name] = r.why
	}
	return m
}()

// refusedList is refused one a line, so that supporting an option is
// removing its line.
var refusedList = []struct{ name, why string }{
	{"arguments", otherEngine},
	{"atomic", "atomic writes are not supported"},
	{"bindname", otherEngine},
	{"block_error_percentiles", noTrims},
	{"brick", otherEngine},
	{"bs_is_seq_rand", oneSize},
	{"buffer_compress_chunk", ownData},
	{"buffer_compress_percentage", ownData},
	{"buffer_pattern", ownData},
	{"busy_poll", "cephbench's rbd and rados engines wait for completions without busy polling"},
	{"busy_wait_polling", otherEngine},
	{"cgroup", noProcess},
	{"cgroup_nodelete", noProcess},
	{"cgroup_weight", noProcess},
	{"chunck_size", otherEngine},
	{"chunk_size", otherEngine},
	{"cmd_type", otherEngine},
	{"cmdprio", noProcess},
	{"cmdprio_bssplit", noProcess},
	{"cmdprio_class", noProcess},
	{"cmdprio_percentage", noProcess},
	{"cont", otherEngine},
	{"cpuchunks", noCPUJob},
	{"cpuload", noCPUJob},
	{"cpumode", noCPUJob},
	{"create_only", "cephbench always runs the I/O after laying files out"},
	{"cuda_io", otherEngine},
	{"dedupe_global", ownData},
	{"dedupe_mode", ownData},
	{"dedupe_percentage", ownData},
	{"dedupe_working_set_percentage", ownData},
	{"direct_write_to_pmem", otherEngine},
	{"donorname", otherEngine},
	{"dummy", otherEngine},
	{"exec_postrun", "cephbench runs no commands from job files"},
	{"exec_prerun", "cephbench runs no commands from job files"},
	{"exit_on_io_done", otherEngine},
	{"fdatasync", "not supported: use fsync=, which cephbench times as fio does"},
	{"file_append", "cephbench addresses files from their start"},
	{"fill_device", "cephbench does not write until the device is full"},
	{"fill_fs", "cephbench does not write until the device is full"},
	{"fixedbufs", uringOpt},
	{"flow", "flow control between jobs is not supported"},
	{"flow_id", "flow control between jobs is not supported"},
	{"flow_sleep", "flow control between jobs is not supported"},
	{"force_async", uringOpt},
	{"fsync_on_close", "not supported: use end_fsync=1"},
	{"gid", noProcess},
	{"gpu_dev_id", otherEngine},
	{"gpu_dev_ids", otherEngine},
	{"grace_time", otherEngine},
	{"hdfs_use_direct", otherEngine},
	{"hdfsdirectory", otherEngine},
	{"hipri", "polled I/O (RWF_HIPRI) is not supported"},
	{"hipri_percentage", "polled I/O (RWF_HIPRI) is not supported"},
	{"hostname", otherEngine},
	{"http_host", otherEngine},
	{"http_mode", otherEngine},
	{"http_pass", otherEngine},
	{"http_s3_key", otherEngine},
	{"http_s3_keyid", otherEngine},
	{"http_s3_region", otherEngine},
	{"http_s3_sse_customer_algorithm", otherEngine},
	{"http_s3_sse_customer_key", otherEngine},
	{"http_s3_storage_class", otherEngine},
	{"http_swift_auth_token", otherEngine},
	{"http_user", otherEngine},
	{"http_verbose", otherEngine},
	{"https", otherEngine},
	{"ignore_error", "cephbench counts each failed I/O by its error and goes on"},
	{"ignore_zone_limits", noZones},
	{"initiator", otherEngine},
	{"inplace", otherEngine},
	{"interface", otherEngine},
	{"iodepth_low", "cephbench refills its queue as each I/O completes"},
	{"ioscheduler", "cephbench does not change the device's I/O scheduler: set it before the run"},
	{"job_max_open_zones", noZones},
	{"latency_percentile", "cephbench does not search for the queue depth that meets a latency target"},
	{"latency_run", "cephbench does not search for the queue depth that meets a latency target"},
	{"latency_target", "cephbench does not search for the queue depth that meets a latency target"},
	{"latency_window", "cephbench does not search for the queue depth that meets a latency target"},
	{"listen", otherEngine},
	{"lockmem", "cephbench does not lock memory away from the page cache"},
	{"log_alternate_epoch", noLogs},
	{"log_alternate_epoch_clock_id", noLogs},
	{"log_compression", noLogs},
	{"log_compression_cpus", noLogs},
	{"log_entries", noLogs},
	{"log_store_compressed", noLogs},
	{"log_unix_epoch", noLogs},
	{"max_latency", "not supported: fio would end the job at the first I/O slower than this"},
	{"max_open_zones", noZones},
	{"merge_blktrace_file", noIOLogs},
	{"merge_blktrace_iters", noIOLogs},
	{"merge_blktrace_scalars", noIOLogs},
	{"mss", otherEngine},
	{"namenode", otherEngine},
	{"nfs_url", otherEngine},
	{"nice", noProcess},
	{"no_completion_thread", otherEngine},
	{"nodelay", otherEngine},
	{"nonvectored", uringOpt},
	{"nowait", "RWF_NOWAIT I/O is not supported"},
	{"object_class", otherEngine},
	{"offset_align", "not supported yet: cephbench addresses files from their start"},
	{"opendir", "cephbench lays out its own files"},
	{"openfiles", "not supported yet: cephbench lays out one file per job clone"},
	{"overwrite", "cephbench decides itself whether a write job lays its file out first"},
	{"percentage_random", "mixes of sequential and random I/O are not supported yet"},
	{"pingpong", otherEngine},
	{"port", otherEngine},
	{"pre_read", "cephbench does not read files into the page cache before a job"},
	{"prio", noProcess},
	{"prioclass", noProcess},
	{"profile", "fio's built-in profiles are not supported"},
	{"program", otherEngine},
	{"proto", otherEngine},
	{"protocol", otherEngine},
	{"read_beyond_wp", noZones},
	{"read_iolog", noIOLogs},
	{"read_iolog_chunked", noIOLogs},
	{"readfua", otherEngine},
	{"refill_buffers", ownData},
	{"registerfiles", uringOpt},
	{"replay_align", noIOLogs},
	{"replay_no_stall", noIOLogs},
	{"replay_redirect", noIOLogs},
	{"replay_scale", noIOLogs},
	{"replay_skip", noIOLogs},
	{"replay_time_scale", noIOLogs},
	{"scramble_buffers", ownData},
	{"serialize_overlap", "cephbench does not hold back writes that overlap one in flight"},
	{"serverip", otherEngine},
	{"sg_write_mode", otherEngine},
	{"single-instance", otherEngine},
	{"single_instance", otherEngine},
	{"skip_bad", otherEngine},
	{"slat_percentiles", "cephbench times each operation once and has no submission latency (slat)"},
	{"sqthread_poll", uringOpt},
	{"sqthread_poll_cpu", uringOpt},
	{"stat_type", otherEngine},
	{"std_redirect", otherEngine},
	{"stream_id", "cephbench sets no write streams or hints"},
	{"svcl", otherEngine},
	{"sync_file_range", "not supported: use fsync="},
	{"thinktime_blocks_type", "thinktime is not supported yet"},
	{"thinktime_iotime", "thinktime is not supported yet"},
	{"thp", otherEngine},
	{"trim_backlog", noTrims},
	{"trim_backlog_batch", noTrims},
	{"trim_percentage", noTrims},
	{"trim_verify_zero", noTrims},
	{"ttl", otherEngine},
	{"uid", noProcess},
	{"uncached", "RWF_UNCACHED I/O is not supported"},
	{"unified_rw_reporting", "cephbench reports reads and writes apart"},
	{"unique_filename", otherEngine},
	{"unlink_each_loop", "cephbench removes the files it created when the job ends"},
	{"uri", otherEngine},
	{"userspace_reap", "cephbench's libaio engine reaps completions with a system call"},
	{"verb", otherEngine},
	{"verify_pattern", "not supported: " + ownData + "; use verify=crc32c"},
	{"verify_state_load", "cephbench keeps no verify state to resume from"},
	{"volume", otherEngine},
	{"wait_for", "not supported: stonewall is"},
	{"window_size", otherEngine},
	{"write_barrier", "barrier writes are not supported"},
	{"write_hint", "cephbench sets no write streams or hints"},
	{"write_iolog", noIOLogs},
	{"writefua", otherEngine},
	{"xnvme_admin", otherEngine},
	{"xnvme_async", otherEngine},
	{"xnvme_be", otherEngine},
	{"xnvme_dev_nsid", otherEngine},
	{"xnvme_iovec", otherEngine},
	{"xnvme_sync", otherEngine},
	{"zero_buffers", ownData},
	{"zone_reset_frequency", noZones},
	{"zone_reset_threshold", noZones},
	{"zonecapacity", noZones},
	{"zonemode", noZones},
	{"zonerange", noZones},
	{"zonesize", noZones},
	{"zoneskip", noZones},
}

// extraOptions are the no-op and matching options as options that parse
// like the others.
func extraOptions() []option {
	var out []option
	for name, arg := range noops {
		out = append(out, option{name: name, arg: arg, noop: true, set: func(*opts, string) error { return nil }})
	}
	for _, m := range matching {
		out = append(out, option{name: m.name, arg: m.arg, set: func(_ *opts, v string) error {
			v = strings.TrimSpace(v)
			if m.arg == boolean {
				b, err := parseBool(v, v == "")
				if err != nil {
					return err
				}
				v = map[bool]string{false: "0", true: "1"}[b]
			}
			if !slices.Contains(m.values, v) {
				return fmt.Errorf("%s (cephbench runs as with %s=%s)", m.why, m.name, strings.Join(m.values, " or "))
			}
			return nil
		}})
	}
	return out
}
