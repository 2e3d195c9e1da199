//go:build unix

package main

import (
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// A record file holds an instance's admissions, in memory shared with the file, so that
// the admissions of an instance killed with SIGKILL are still read once it is gone: its
// header counts the records reserved and the decisions made (updated as the instance
// runs), and each record is the interval [t0, t1] of wall-clock nanoseconds that the call
// which was admitted ran in (t1 0: reserved, not written yet).
type recordFile struct {
	mem  []byte
	hdr  *[8]int64
	recs []record
}

type record struct{ t0, t1 int64 }

const (
	headerSize = 64
	maxRecords = 1 << 20
)

// createRecords makes the record file at path, of fixed size, mapped shared.
func createRecords(path string) (*recordFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := f.Truncate(headerSize + maxRecords*16); err != nil {
		return nil, err
	}
	return mapRecords(f)
}

// openRecords maps the record file at path, written by an instance.
func openRecords(path string) (*recordFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return mapRecords(f)
}

func mapRecords(f *os.File) (*recordFile, error) {
	mem, err := syscall.Mmap(int(f.Fd()), 0, headerSize+maxRecords*16, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", f.Name(), err)
	}
	r := &recordFile{mem: mem, hdr: (*[8]int64)(unsafe.Pointer(&mem[0]))}
	r.recs = unsafe.Slice((*record)(unsafe.Pointer(&mem[headerSize])), maxRecords)
	return r, nil
}

// add records an admission that ran in [t0, t1]; false when the file is full.
func (r *recordFile) add(t0, t1 int64) bool {
	i := atomic.AddInt64(&r.hdr[0], 1) - 1
	if i >= maxRecords {
		return false
	}
	atomic.StoreInt64(&r.recs[i].t0, t0)
	atomic.StoreInt64(&r.recs[i].t1, t1)
	return true
}

// failed counts a failure of Redis the instance's limiter reported.
func (r *recordFile) failed() { atomic.AddInt64(&r.hdr[2], 1) }

// failures returns the failures of Redis counted.
func (r *recordFile) failures() int64 { return atomic.LoadInt64(&r.hdr[2]) }

// decided adds n to the count of decisions made.
func (r *recordFile) decided(n int64) { atomic.AddInt64(&r.hdr[1], n) }

// read returns the written records and the decisions counted.
func (r *recordFile) read() (recs []record, decisions int64) {
	n := min(atomic.LoadInt64(&r.hdr[0]), maxRecords)
	for i := range n {
		if t1 := atomic.LoadInt64(&r.recs[i].t1); t1 != 0 {
			recs = append(recs, record{atomic.LoadInt64(&r.recs[i].t0), t1})
		}
	}
	return recs, atomic.LoadInt64(&r.hdr[1])
}

func (r *recordFile) close() error { return syscall.Munmap(r.mem) }
