package server

import (
	"io"
	"log/slog"

	"github.com/mr-tron/base58"
)

func base58Encode(b []byte) string { return base58.Encode(b) }

func newTestLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
