//go:build unix

package sqlite

import (
	"fmt"
	"os"
	"syscall"
)

// lockOpen holds an exclusive advisory lock on path+"-open" while a store is
// opened: the first connection switches the file to WAL and the migrations
// run, and SQLite answers SQLITE_BUSY at once, without its busy handler, to
// a connection that meets another one doing either. Serialising the opening
// (as PostgreSQL's advisory lock serialises migrations) makes processes that
// start together wait for each other instead. The lock file is never
// removed: a file that two processes lock must stay the same file.
//
// It is a separate file on purpose: closing any descriptor of the database
// file would drop the POSIX locks SQLite holds on it.
//
// LockOpen is the same lock for the other users of the database file that
// create or migrate something in it (River's migrations, in internal/
// schedule), so that they are serialised with the store's opening.
func LockOpen(path string) (unlock func(), err error) { return lockOpen(path) }

func lockOpen(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path+"-open", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: sqlite: open lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("store: sqlite: open lock: %w", err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
