package ops

import (
	"testing"

	"go.uber.org/goleak"
)

// Ops open connection scopes; every test must leave none of their
// goroutines behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
