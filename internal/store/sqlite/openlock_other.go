//go:build !unix

package sqlite

// lockOpen is a no-op where flock is not available: processes that open one
// database at the same moment may then see SQLITE_BUSY and must retry.
func lockOpen(string) (func(), error) { return func() {}, nil }
