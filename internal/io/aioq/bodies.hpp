/* bodies.hpp: the data a Ceph backend of the aioq core (librados,
 * librbd) writes past a block's header.
 *
 * cephbench fills every buffer of a queue with the same data pattern, and
 * between two writes from a buffer it changes only the block's header, in
 * its first BODY_FROM bytes, until a read lands in the buffer. So every
 * write from a buffer no read has touched sends its header and then one
 * shared body, a copy made once:
 *  - the messenger computes the CRC of a buffer's bytes once and caches it
 *    on the buffer, where a fresh buffer per op costs a CRC pass over
 *    every byte of every op;
 *  - librbd keeps the buffers it is given in its cache, so it must own
 *    what it is given: one copy in all, not one per op.
 * A buffer a read has landed in keeps a body of its own, dropped at its
 * next read.
 *
 * Header-only, C++. Thread-safe: the core issues ops from the submitting
 * thread and from completion callbacks. */
#ifndef CEPHBENCH_AIOQ_BODIES_HPP
#define CEPHBENCH_AIOQ_BODIES_HPP

#include <stddef.h>

#include <mutex>
#include <unordered_map>

#include <rados/buffer.h>

namespace aioq_bodies {

/* Where a block's body begins: past workload's header (24 bytes) and
 * rados bench's text (31), on a cache line. */
constexpr size_t BODY_FROM = 64;
/* Smaller writes go whole, as one buffer. */
constexpr size_t BODY_MIN_WRITE = 2 * BODY_FROM;

class Bodies {
public:
	/* For a queue of buffers buffers. With owned, the library may keep a
	 * write's data after the op completes, so it is given copies;
	 * otherwise it is given the caller's memory, which is not changed
	 * while an op is in flight. */
	Bodies(int buffers, bool owned) : owned_(owned) { touched_.reserve(buffers); }

	/* Appends to bl the data of a write of len bytes from buf. */
	void append_write(ceph::bufferlist &bl, char *buf, size_t len)
	{
		if (len < BODY_MIN_WRITE) {
			bl.push_back(piece(buf, len));
			return;
		}
		bl.push_back(piece(buf, BODY_FROM));
		bl.push_back(body(buf, len - BODY_FROM));
	}

	/* Notes that a read into the buffer at buf is about to start: from
	 * now on its body is its own. Ops address their buffers from the
	 * start. */
	void read_into(const char *buf)
	{
		std::lock_guard<std::mutex> l(mu_);
		touched_[buf] = ceph::bufferptr();
	}

private:
	ceph::bufferptr piece(char *p, size_t len)
	{
		if (owned_)
			return ceph::bufferptr(ceph::buffer::copy(p, len));
		return ceph::bufferptr(ceph::buffer::create_static(len, p));
	}

	/* The n bytes past buf's header. */
	ceph::bufferptr body(char *buf, size_t n)
	{
		std::lock_guard<std::mutex> l(mu_);
		auto t = touched_.find(buf);
		if (t != touched_.end()) {
			/* its own, since its last read */
			if (t->second.length() < n)
				t->second = piece(buf + BODY_FROM, n);
			return ceph::bufferptr(t->second, 0, n);
		}
		if (shared_.length() < n)
			shared_ = ceph::bufferptr(ceph::buffer::copy(buf + BODY_FROM, n));
		return ceph::bufferptr(shared_, 0, n);
	}

	std::mutex mu_;
	std::unordered_map<const char *, ceph::bufferptr> touched_;
	ceph::bufferptr shared_;
	bool owned_;
};

} // namespace aioq_bodies

#endif
