package proxy

import "github.com/galeon-db/galeon/internal/sqlclass"

// digest normalises q into the session's scratch buffer and returns its
// hash and text; the text is valid until the session's next digest. The
// tokens come from the command's classification when q is its text.
func (s *session) digest(q string) (uint64, []byte) {
	hash, text := sqlclass.DigestLogged(s.digestBuf, q, &s.toks)
	if cap(text) <= 64<<10 {
		s.digestBuf = text[:0] // keep the buffer, unless a huge statement grew it
	}
	return hash, text
}
