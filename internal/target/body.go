package target

import "io"

// maxPresize bounds the buffer a declared Content-Length reserves before any
// byte has arrived, so a length the target claims but never sends costs no
// more than this.
const maxPresize = 64 << 10

// readBody reads r to its end as io.ReadAll(io.LimitReader(r, limit+1))
// does, with the same bytes and errors, but starts from the length the
// response declares (declared, -1 when unknown): a body of a known length is
// read into one allocation instead of a growing series.
func readBody(r io.Reader, declared int64, limit int) ([]byte, error) {
	size := 512 // io.ReadAll's first buffer
	if declared >= 0 {
		// One byte more than declared: the read that sees the end needs no
		// room, but a body longer than declared (or past the cap) must still
		// be seen as such.
		size = int(min(declared, int64(limit), maxPresize)) + 1
	}
	lr := io.LimitReader(r, int64(limit)+1)
	b := make([]byte, 0, size)
	for {
		n, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow as io.ReadAll does
		}
	}
}
