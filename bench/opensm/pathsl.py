#!/usr/bin/env python3
"""pathsl.py: ask the subnet administrator (SA) for the SL of many paths.

Runs under LD_PRELOAD=libumad2sim.so against ibsim while OpenSM is the SM.
For every input line "SLID DLID" it sends one SubnAdmGet(PathRecord) with
the SLID and DLID components set, and prints "SLID DLID SL" for an
answered query or "SLID DLID - STATUS" (MAD status in hex, or "timeout").

Why not saquery: one process per query is slow, and ibsim/umad2sim do not
do RMPP, so GetTable answers with many records come back cut short; a Get
for one (SLID, DLID) pair fits one MAD. Several queries are kept in flight
(--window) and matched to their answers by transaction id.

Only the Python standard library and libibumad.so.3 are needed.
"""
import argparse
import ctypes
import errno
import struct
import sys
import time

MAD_LEN = 256
SA_CLASS, SA_VERSION = 0x03, 2
GET, GET_RESP = 0x01, 0x81
PATH_RECORD = 0x0035
QP1, QP1_QKEY = 1, 0x80010000
# PathRecord component mask bits (IBA 15.2.5.16): DLID, SLID, NumbPath.
MASK = (1 << 4) | (1 << 5) | (1 << 12)
SA_DATA = 56  # offset of the attribute after the MAD and SA headers


def request(tid, slid, dlid):
    """One SubnAdmGet(PathRecord) MAD for slid -> dlid."""
    m = bytearray(MAD_LEN)
    # common MAD header: base version, class, class version, method ...
    m[0:4] = bytes((1, SA_CLASS, SA_VERSION, GET))
    struct.pack_into(">Q", m, 8, tid)            # transaction id
    struct.pack_into(">H", m, 16, PATH_RECORD)   # attribute id
    struct.pack_into(">Q", m, 48, MASK)          # SA header: component mask
    struct.pack_into(">HH", m, SA_DATA + 40, dlid, slid)
    m[SA_DATA + 49] = 1                          # NumbPath 1, not reversible
    return bytes(m)


class Port:
    def __init__(self, sm_lid):
        lib = ctypes.CDLL("libibumad.so.3", use_errno=True)
        lib.umad_get_mad.restype = ctypes.c_void_p
        lib.umad_get_mad.argtypes = [ctypes.c_void_p]
        lib.umad_size.restype = ctypes.c_size_t
        if lib.umad_init() < 0:
            sys.exit("pathsl: umad_init failed")
        self.fd = lib.umad_open_port(None, 0)
        if self.fd < 0:
            sys.exit("pathsl: umad_open_port failed (is ibsim running, LD_PRELOAD set?)")
        self.agent = lib.umad_register(self.fd, SA_CLASS, SA_VERSION, 0, None)
        if self.agent < 0:
            sys.exit("pathsl: umad_register failed")
        self.lib, self.sm_lid = lib, sm_lid
        self.hdr = lib.umad_size()
        self.out = ctypes.create_string_buffer(self.hdr + MAD_LEN)
        self.inp = ctypes.create_string_buffer(self.hdr + MAD_LEN)

    def send(self, mad, timeout_ms):
        ctypes.memset(self.out, 0, self.hdr)
        self.lib.umad_set_addr(self.out, self.sm_lid, QP1, 0, QP1_QKEY)
        ctypes.memmove(self.lib.umad_get_mad(self.out), mad, MAD_LEN)
        if self.lib.umad_send(self.fd, self.agent, self.out, MAD_LEN, timeout_ms, 0) < 0:
            sys.exit("pathsl: umad_send failed")

    def recv(self, timeout_ms):
        """The next MAD received, or None after timeout_ms."""
        n = ctypes.c_int(MAD_LEN)
        if self.lib.umad_recv(self.fd, self.inp, ctypes.byref(n), timeout_ms) < 0:
            return None, 0
        status = self.lib.umad_status(self.inp)
        return ctypes.string_at(self.lib.umad_get_mad(self.inp), MAD_LEN), status


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sm-lid", type=lambda s: int(s, 0), required=True)
    ap.add_argument("--window", type=int, default=16, help="queries in flight")
    ap.add_argument("--timeout-ms", type=int, default=1000)
    ap.add_argument("--retries", type=int, default=4)
    a = ap.parse_args()

    port = Port(a.sm_lid)
    pairs = []
    for line in sys.stdin:
        f = line.split()
        if len(f) >= 2 and not f[0].startswith("#"):
            pairs.append((int(f[0], 0), int(f[1], 0)))
    out = sys.stdout
    pending = {}   # tid -> [index, tries, sent at]
    nxt, done, tid = 0, 0, 0
    while done < len(pairs):
        while nxt < len(pairs) and len(pending) < a.window:
            tid = tid % 0xFFFFFFFF + 1
            pending[tid] = [nxt, 0, time.monotonic()]
            port.send(request(tid, *pairs[nxt]), a.timeout_ms)
            nxt += 1
        mad, st = port.recv(a.timeout_ms)
        if mad is not None and st == 0 and mad[3] == GET_RESP:
            rtid = struct.unpack_from(">Q", mad, 8)[0] & 0xFFFFFFFF
            p = pending.pop(rtid, None)
            if p is None:
                continue   # answer to a query already retried and answered
            slid, dlid = pairs[p[0]]
            status = struct.unpack_from(">H", mad, 4)[0]
            if status:
                out.write("%d %d - 0x%04x\n" % (slid, dlid, status))
            else:
                out.write("%d %d %d\n" % (slid, dlid, mad[SA_DATA + 53] & 0x0F))
            done += 1
            continue
        if mad is not None and st not in (0, errno.ETIMEDOUT):
            sys.exit("pathsl: receive status %d" % st)
        # a timeout: resend what has waited too long, give up after retries
        now = time.monotonic()
        for t, p in list(pending.items()):
            if now - p[2] < a.timeout_ms / 1000.0:
                continue
            del pending[t]
            slid, dlid = pairs[p[0]]
            if p[1] >= a.retries:
                out.write("%d %d - timeout\n" % (slid, dlid))
                done += 1
                continue
            tid = tid % 0xFFFFFFFF + 1
            pending[tid] = [p[0], p[1] + 1, now]
            port.send(request(tid, slid, dlid), a.timeout_ms)
    out.flush()


if __name__ == "__main__":
    main()
