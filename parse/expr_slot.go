package parse

// slot returns the next slot of slab s, as newNode does, without storing
// a value into it: the slot is still zero (fresh from make, never reused;
// see slab), so the caller stores only the fields it sets. newNode's
// value is built and cleared on the stack and then copied whole, which
// for the frequent expression nodes (CallExpr, MemberExpr, IndexExpr,
// ...) costs more than the node's few fields.
func slot[T any](s *slab[T]) *T {
	if len(s.buf) == cap(s.buf) {
		s.buf = make([]T, 0, nextChunk(cap(s.buf), 1))
	}
	n := len(s.buf)
	s.buf = s.buf[:n+1]
	return &s.buf[n]
}
