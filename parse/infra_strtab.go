package parse

import (
	"math/bits"
	"unsafe"
)

// strIndex finds strings among keys, the strings added so far in the order
// added: an open-addressing hash table over positions in keys. It replaces
// string-keyed Go maps on lookups that run thousands of times per parse (a
// Go map lookup of a name costs ~140 instructions: aeshash, the probe, a
// memequal call).
//
// A slot holds the key's strKey words (a, b) and its length, so most
// lookups compare three words and no bytes: for a key of up to 16 bytes
// (a, b, length) spell it exactly (see strKey), so equal words mean equal
// strings; a longer key is compared in full when its words match.
//
// Exactness: find returns the position of s in keys, or -1, whatever the
// hashes. Probing stops at an empty slot (keys are never removed) or after
// maxProbe slots; a key that found no free slot within maxProbe of its
// hash is in over (a Go map), which find then asks. So names whose hashes
// collide (crafted input) cost at most maxProbe probes and a map lookup
// each, never a long scan.
type strIndex struct {
	keys  []string
	slots []strSlot
	over  map[string]int32 // keys placed in no slot (see above)
	mask  uint64           // len(slots)-1
	free  int              // keys that may still be added before growing
}

type strSlot struct {
	a, b uint64 // strKey of the key
	meta uint64 // len(key)<<32 | position+1; 0 for an empty slot
}

const maxProbe = 16

// strKey returns two words that, with len(s), spell s exactly when s has
// at most 16 bytes (its first and last 8 bytes, overlapping; the first and
// last 4 of a shorter one; its bytes 0, n/2 and n-1 below 4), and hash it
// otherwise (the bytes between the first and last 8, a step per 8 bytes;
// names that differ only in the middle are common, block_reduce_sum_kernel
// and block_reduce_max_kernel).
func strKey(s string) (a, b uint64) {
	n := len(s)
	p := unsafe.Pointer(unsafe.StringData(s))
	switch {
	case n >= 8:
		a, b = load64(p, 0), load64(p, n-8)
		for i := 8; i < n-8; i += 8 {
			a = bits.RotateLeft64((a^load64(p, i))*strMul1, 31)
		}
	case n >= 4:
		a = uint64(load32(p, 0)) | uint64(load32(p, n-4))<<32
	case n > 0:
		a = uint64(*(*byte)(p)) | uint64(*(*byte)(unsafe.Add(p, n>>1)))<<8 | uint64(*(*byte)(unsafe.Add(p, n-1)))<<16
	}
	return a, b
}

const strMul1, strMul2 = 0x9E3779B97F4A7C15, 0xD6E8FEB86659FD93

// strSlotHash mixes a key's words and length into a slot number's bits.
func strSlotHash(a, b uint64, n int) uint64 {
	h := (a^uint64(n))*strMul1 ^ b*strMul2
	return h ^ h>>29
}

// find returns the position of s in x.keys, or -1. The path for keys of
// up to 16 bytes (nearly all names) makes no call: (a, b, length) spell
// such a key, so a slot that matches them is the answer.
func (x *strIndex) find(s string) int {
	n := len(s)
	if n > 16 || len(x.slots) == 0 {
		return x.findLong(s)
	}
	// a, b := strKey(s), written out (strKey does not inline).
	p := unsafe.Pointer(unsafe.StringData(s))
	var a, b uint64
	switch {
	case n >= 8:
		a, b = load64(p, 0), load64(p, n-8)
	case n >= 4:
		a = uint64(load32(p, 0)) | uint64(load32(p, n-4))<<32
	case n > 0:
		a = uint64(*(*byte)(p)) | uint64(*(*byte)(unsafe.Add(p, n>>1)))<<8 | uint64(*(*byte)(unsafe.Add(p, n-1)))<<16
	}
	i := strSlotHash(a, b, n) & x.mask
	for range maxProbe {
		e := &x.slots[i]
		if e.meta == 0 {
			return -1
		}
		if e.a == a && e.b == b && e.meta>>32 == uint64(n) {
			return int(uint32(e.meta)) - 1
		}
		i = (i + 1) & x.mask
	}
	return x.findOver(s)
}

// findLong is find for keys of more than 16 bytes (and an empty table):
// their words only hash them, so a matching slot's key is compared.
func (x *strIndex) findLong(s string) int {
	if len(x.slots) == 0 {
		return -1
	}
	n := len(s)
	a, b := strKey(s)
	i := strSlotHash(a, b, n) & x.mask
	for range maxProbe {
		e := &x.slots[i]
		if e.meta == 0 {
			return -1
		}
		if e.a == a && e.b == b && e.meta>>32 == uint64(n) {
			if k := int(uint32(e.meta)) - 1; x.keys[k] == s {
				return k
			}
		}
		i = (i + 1) & x.mask
	}
	return x.findOver(s)
}

// findOver looks s up among the keys that found no slot.
func (x *strIndex) findOver(s string) int {
	if k, ok := x.over[s]; ok {
		return int(k)
	}
	return -1
}

// add adds s, which must not be in x.keys (find(s) < 0), and returns its
// position.
func (x *strIndex) add(s string) int {
	if x.free == 0 {
		x.grow()
	}
	k := len(x.keys)
	x.keys = append(x.keys, s)
	x.place(s, k)
	x.free--
	return k
}

// place records key s at position k in a slot (or in over).
func (x *strIndex) place(s string, k int) {
	a, b := strKey(s)
	i := strSlotHash(a, b, len(s)) & x.mask
	for range maxProbe {
		if e := &x.slots[i]; e.meta == 0 {
			*e = strSlot{a, b, uint64(len(s))<<32 | uint64(k+1)}
			return
		}
		i = (i + 1) & x.mask
	}
	if x.over == nil {
		x.over = make(map[string]int32)
	}
	x.over[s] = int32(k)
}

// grow doubles the slots (16 at first) and places every key again; the
// table stays at most half full.
func (x *strIndex) grow() {
	n := max(2*len(x.slots), 16)
	x.slots = make([]strSlot, n)
	x.mask = uint64(n - 1)
	x.over = nil
	for k, s := range x.keys {
		x.place(s, k)
	}
	x.free = n/2 - len(x.keys)
}

// load64 and load32 read 8 or 4 bytes at p+i, which the caller knows to
// lie in one string: plain (possibly unaligned) loads in the machine's
// byte order, which is all strKey needs (the same words for the same
// bytes).
func load64(p unsafe.Pointer, i int) uint64 { return *(*uint64)(unsafe.Add(p, i)) }

func load32(p unsafe.Pointer, i int) uint32 { return *(*uint32)(unsafe.Add(p, i)) }
