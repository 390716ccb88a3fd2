//go:build !unix

package sqlite

// lockOpen is a no-op where flock is not available: processes that open one
// database at the same moment may then see SQLITE_BUSY and must retry.
func lockOpen(string) (func(), error) { return func() {}, nil }

// LockOpen is lockOpen for the other users of the database file.
func LockOpen(path string) (func(), error) { return lockOpen(path) }
