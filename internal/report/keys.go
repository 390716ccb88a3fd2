package report

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Key files live in the service's data directory.
const (
	SigningKeyFile = "signing-key.pem" // the current signing key, PEM PKCS#8
	RetiredDir     = "retired"         // retired keys, *.pem, verify only
	MemoKeyFile    = "memo-key"        // the HMAC key of challenge memos
	MemoKeySize    = 32
)

// maxKeyFile bounds what is read from a key file; a PEM Ed25519 key is
// about 120 bytes.
const maxKeyFile = 64 << 10

// LoadOrCreateKey loads dir/signing-key.pem, or, when there is none, makes a
// key from randReader and writes it there (mode 0600, never over an existing
// file). created says which happened.
func LoadOrCreateKey(dir string, randReader io.Reader) (key Key, created bool, err error) {
	path := filepath.Join(dir, SigningKeyFile)
	key, err = LoadKeyFile(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, false, err
	}
	if key, err = GenerateKey(randReader); err != nil {
		return Key{}, false, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Key{}, false, fmt.Errorf("report: creating key directory: %w", err)
	}
	created, err = writeNew(path, encodeKey(key))
	if err != nil {
		return Key{}, false, err
	}
	if !created {
		// Another process wrote the file first: use its key.
		key, err = LoadKeyFile(path)
		return key, false, err
	}
	return key, true, nil
}

// LoadKeyFile reads a PEM PKCS#8 Ed25519 private key. The file must be a
// regular file with no group or other permission bits.
func LoadKeyFile(path string) (Key, error) {
	data, err := readPrivateFile(path)
	if err != nil {
		return Key{}, err
	}
	priv, err := decodePrivatePEM(data)
	if err != nil {
		return Key{}, fmt.Errorf("report: %s: %w", path, err)
	}
	return NewKey(priv)
}

// SaveKeyFile writes key to path as PEM PKCS#8, mode 0600; it refuses to
// replace an existing file.
func SaveKeyFile(path string, key Key) error {
	if err := key.check(); err != nil {
		return err
	}
	created, err := writeNew(path, encodeKey(key))
	if err != nil {
		return err
	}
	if !created {
		return fmt.Errorf("report: %s: %w", path, fs.ErrExist)
	}
	return nil
}

// LoadRetired reads dir/retired/*.pem in name order. A file may hold a
// private key (PKCS#8, then held to the same mode rule as the signing key)
// or a public key (PKIX "PUBLIC KEY"); either way only its public half is
// kept. No retired directory means no retired keys.
func LoadRetired(dir string) ([]PublicKey, error) {
	paths, err := filepath.Glob(filepath.Join(dir, RetiredDir, "*.pem"))
	if err != nil {
		return nil, fmt.Errorf("report: listing retired keys: %w", err)
	}
	sort.Strings(paths)
	var keys []PublicKey
	for _, path := range paths {
		k, err := loadRetiredFile(path)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// LoadKeySet is current plus the retired keys of dir; a retired file that
// holds the current key is not listed twice.
func LoadKeySet(dir string, current Key) (KeySet, error) {
	if err := current.check(); err != nil {
		return KeySet{}, err
	}
	retired, err := LoadRetired(dir)
	if err != nil {
		return KeySet{}, err
	}
	set := KeySet{Current: current.Public()}
	seen := map[string]bool{current.Kid: true}
	for _, k := range retired {
		if !seen[k.Kid] {
			seen[k.Kid] = true
			set.Retired = append(set.Retired, k)
		}
	}
	return set, nil
}

// LoadOrCreateSecret loads dir/name, which must hold exactly n bytes, or,
// when there is none, writes n bytes of randReader there with mode 0600.
// name is a plain file name (e.g. MemoKeyFile); n is at least 16.
func LoadOrCreateSecret(dir, name string, n int, randReader io.Reader) ([]byte, error) {
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return nil, errors.New("report: secret name must be a plain file name")
	}
	if n < 16 || n > maxKeyFile {
		return nil, errors.New("report: secret size must be between 16 and 65536 bytes")
	}
	path := filepath.Join(dir, name)
	secret, err := loadSecret(path, n)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return secret, err
	}
	secret = make([]byte, n)
	if _, err := io.ReadFull(randReader, secret); err != nil {
		return nil, fmt.Errorf("report: reading secret: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("report: creating key directory: %w", err)
	}
	created, err := writeNew(path, secret)
	if err != nil {
		return nil, err
	}
	if !created {
		return loadSecret(path, n)
	}
	return secret, nil
}

func loadSecret(path string, n int) ([]byte, error) {
	data, err := readPrivateFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) != n {
		return nil, fmt.Errorf("report: %s: holds %d bytes, want %d", path, len(data), n)
	}
	return data, nil
}

func loadRetiredFile(path string) (PublicKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return PublicKey{}, fmt.Errorf("report: reading retired key: %w", err)
	}
	// A public key needs no mode rule; its size is checked when decoded.
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	f.Close()
	if err != nil {
		return PublicKey{}, fmt.Errorf("report: reading retired key: %w", err)
	}
	block, _ := pem.Decode(data)
	if block != nil && block.Type == "PUBLIC KEY" {
		return decodePublicPEM(path, data)
	}
	k, err := LoadKeyFile(path)
	if err != nil {
		return PublicKey{}, err
	}
	return k.Public(), nil
}

func decodePublicPEM(path string, data []byte) (PublicKey, error) {
	if len(data) > maxKeyFile {
		return PublicKey{}, fmt.Errorf("report: %s: too large for a key file", path)
	}
	block, rest := pem.Decode(data)
	if block == nil || len(bytes.TrimSpace(rest)) != 0 {
		return PublicKey{}, fmt.Errorf("report: %s: not a single PEM block", path)
	}
	parsed, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return PublicKey{}, fmt.Errorf("report: %s: not a PKIX public key", path)
	}
	pub, ok := parsed.(ed25519.PublicKey)
	if !ok {
		return PublicKey{}, fmt.Errorf("report: %s: not an Ed25519 key", path)
	}
	return NewPublicKey(pub)
}

func decodePrivatePEM(data []byte) (ed25519.PrivateKey, error) {
	block, rest := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" || len(bytes.TrimSpace(rest)) != 0 {
		return nil, errors.New(`not a single PEM "PRIVATE KEY" block`)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("not a PKCS#8 private key")
	}
	priv, ok := parsed.(ed25519.PrivateKey)
	if !ok {
		return nil, errors.New("not an Ed25519 key")
	}
	return priv, nil
}

func encodeKey(key Key) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(key.Private)
	if err != nil {
		// Only an unsupported key type fails, and key.check ran first.
		panic("report: marshaling an Ed25519 key: " + err.Error())
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// readPrivateFile reads a secret file, refusing anything but a regular file
// readable by its owner alone: a key others can read is no longer ours.
func readPrivateFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("report: opening key file: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("report: opening key file: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("report: %s: not a regular file", path)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("report: %s: mode %#o lets group or others in; chmod 600 it", path, perm)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("report: reading key file: %w", err)
	}
	if len(data) > maxKeyFile {
		return nil, fmt.Errorf("report: %s: too large for a key file", path)
	}
	return data, nil
}

// writeNew writes data to path with mode 0600 unless path exists, in which
// case it reports created == false and leaves the file alone. The bytes go
// to a temporary file first and are linked into place, so a crash never
// leaves a half-written key under the real name.
func writeNew(path string, data []byte) (created bool, err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, fmt.Errorf("report: writing key file: %w", err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName)
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return false, fmt.Errorf("report: writing key file: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, fmt.Errorf("report: writing key file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, fmt.Errorf("report: writing key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("report: writing key file: %w", err)
	}
	if err := os.Link(tmpName, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("report: writing key file: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: make the new name durable
		d.Close()
	}
	return true, nil
}
