package proxy

import "github.com/galeon-db/galeon/internal/sqlclass"

// digest normalises q into the session's scratch buffer and returns its
// hash and text; the text is valid until the session's next digest.
func (s *session) digest(q string) (uint64, []byte) {
	hash, text := sqlclass.DigestInto(s.digestBuf, q)
	if cap(text) <= 64<<10 {
		s.digestBuf = text[:0] // keep the buffer, unless a huge statement grew it
	}
	return hash, text
}
