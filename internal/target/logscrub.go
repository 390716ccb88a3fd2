package target

import (
	"bytes"
	"io"
	"log"
	"sync"
)

// net/http's transport writes to the standard logger, quoting up to 4 KiB of
// them, when a target sends bytes after its response on a connection that
// is idle (a body after a 204, more bytes than its Content-Length said).
// Those bytes are fetched content, and nothing fetched may reach a log. With
// connections reused, such a target makes the transport write that line, so
// every Client keeps the standard logger behind a filter that replaces the
// line with a closed-form one (the connection is dropped either way; the
// next request gets a fresh one).

// unsolicited is how net/http's line starts, after the logger's prefix.
var unsolicited = []byte("Unsolicited response received on idle HTTP channel")

// scrubbedLine replaces it.
const scrubbedLine = "net/http: a target sent bytes after its response on an idle connection; the connection was dropped (the bytes are not shown)\n"

// scrubber is the filter in front of the standard logger's writer.
type scrubber struct{ w io.Writer }

func (s scrubber) Write(p []byte) (int, error) {
	i := bytes.Index(p, unsolicited)
	if i < 0 {
		return s.w.Write(p)
	}
	line := append(append([]byte(nil), p[:i]...), scrubbedLine...)
	if _, err := s.w.Write(line); err != nil {
		return 0, err
	}
	return len(p), nil
}

var scrubMu sync.Mutex

// scrubTransportLog puts the filter in front of the standard logger's
// current writer, unless it is there already (a program or a test may have
// replaced the writer since).
func scrubTransportLog() {
	scrubMu.Lock()
	defer scrubMu.Unlock()
	if _, ok := log.Writer().(scrubber); !ok {
		log.SetOutput(scrubber{log.Writer()})
	}
}
