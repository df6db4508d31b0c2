//go:build cgo

package umad

/*
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <rdma/rdma_user_ioctl.h>

// The calls go through libc by name, so an LD_PRELOAD library (ibsim's
// umad2sim) serves them as the kernel would.

static int nuesm_umad_open(const char *path, uint8_t mgmt_class, uint32_t *agent) {
	int fd = open(path, O_RDWR);
	if (fd < 0)
		return -errno;
	// No IB_USER_MAD_ENABLE_PKEY: the header stays the one without the
	// P_Key index (ib_user_mad_hdr_old), which every kernel accepts and
	// which umad2sim expects from a caller outside libibumad.
	struct ib_user_mad_reg_req req;
	memset(&req, 0, sizeof(req));
	req.qpn = 0;
	req.mgmt_class = mgmt_class;
	req.mgmt_class_version = 1;
	if (ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &req) < 0) {
		int e = errno;
		close(fd);
		return -(e ? e : EINVAL);
	}
	*agent = req.id;
	return fd;
}

// nuesm_umad_send writes one MAD to the permissive LID over QP0.
static int nuesm_umad_send(int fd, uint32_t agent, const void *mad, uint32_t timeout_ms) {
	unsigned char buf[sizeof(struct ib_user_mad_hdr_old) + 256];
	struct ib_user_mad_hdr_old *h = (struct ib_user_mad_hdr_old *)buf;
	memset(buf, 0, sizeof(buf));
	h->id = agent;
	h->timeout_ms = timeout_ms;
	h->retries = 0;
	h->lid = htons(0xffff);
	h->qpn = 0;
	h->qkey = 0;
	memcpy(buf + sizeof(*h), mad, 256);
	ssize_t n = write(fd, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	if ((size_t)n != sizeof(buf))
		return -EIO;
	return 0;
}

// transient says whether a failed poll or read may be tried again: an
// interrupt, no data yet, or no errno at all (umad2sim's poll fails
// without one on a spurious wake-up, and its read returns -EWOULDBLOCK
// without setting errno).
static int transient(int e) {
	return e == 0 || e == EINTR || e == EAGAIN || e == EWOULDBLOCK;
}

// nuesm_umad_recv waits up to timeout_ms for a MAD: 0 when none came,
// 1 with the MAD and its status, a negative errno on failure.
static int nuesm_umad_recv(int fd, void *mad, uint32_t *status, int timeout_ms) {
	struct pollfd p = { .fd = fd, .events = POLLIN };
	errno = 0;
	int r = poll(&p, 1, timeout_ms);
	if (r < 0)
		return transient(errno) ? 0 : -errno;
	if (r == 0 || !(p.revents & POLLIN))
		return 0;
	unsigned char buf[sizeof(struct ib_user_mad_hdr_old) + 256];
	memset(buf, 0, sizeof(buf));
	errno = 0;
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return transient(errno) ? 0 : -errno;
	if ((size_t)n < sizeof(struct ib_user_mad_hdr_old))
		return 0;
	*status = ((struct ib_user_mad_hdr_old *)buf)->status;
	memcpy(mad, buf + sizeof(struct ib_user_mad_hdr_old), 256);
	return 1;
}

static int nuesm_umad_close(int fd) {
	return close(fd) < 0 ? -errno : 0;
}
*/
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"
)

// Supported says whether this build can open umad devices (cgo).
const Supported = true

// device is an open umad file with a registered agent.
type device struct {
	fd    C.int
	agent C.uint32_t
	path  string
}

func openDevice(path string) (*device, error) {
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	var agent C.uint32_t
	fd := C.nuesm_umad_open(cp, ClassDirectRoute, &agent)
	if fd < 0 {
		return nil, fmt.Errorf("opening %s and registering a directed-route SMP agent: %w", path, syscall.Errno(-fd))
	}
	return &device{fd: fd, agent: agent, path: path}, nil
}

func (d *device) send(mad *[MADSize]byte, timeoutMS int) error {
	if r := C.nuesm_umad_send(d.fd, d.agent, unsafe.Pointer(&mad[0]), C.uint32_t(timeoutMS)); r < 0 {
		return fmt.Errorf("writing an SMP to %s: %w", d.path, syscall.Errno(-r))
	}
	return nil
}

// recv waits up to timeoutMS for one MAD; ok is false when none came.
func (d *device) recv(mad *[MADSize]byte, timeoutMS int) (status uint32, ok bool, err error) {
	var st C.uint32_t
	r := C.nuesm_umad_recv(d.fd, unsafe.Pointer(&mad[0]), &st, C.int(timeoutMS))
	if r < 0 {
		return 0, false, fmt.Errorf("reading an SMP from %s: %w", d.path, syscall.Errno(-r))
	}
	return uint32(st), r == 1, nil
}

func (d *device) close() error {
	if r := C.nuesm_umad_close(d.fd); r < 0 {
		return syscall.Errno(-r)
	}
	return nil
}
