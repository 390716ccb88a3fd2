package report

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func fileMode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

func TestLoadOrCreateKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "payability-data")
	seed := bytes.Repeat([]byte{42}, ed25519.SeedSize)

	key, created, err := LoadOrCreateKey(dir, bytes.NewReader(seed))
	if err != nil {
		t.Fatal(err)
	}
	if !created {
		t.Error("first call: created = false")
	}
	if want := seededKey(t, 42); key.Kid != want.Kid {
		t.Errorf("kid %s, want the key of the injected seed %s", key.Kid, want.Kid)
	}
	path := filepath.Join(dir, SigningKeyFile)
	if got := fileMode(t, path); got != 0o600 {
		t.Errorf("key file mode %#o, want 0600", got)
	}
	if got := fileMode(t, dir); got&0o077 != 0 {
		t.Errorf("key directory mode %#o lets group or others in", got)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("-----BEGIN PRIVATE KEY-----\n")) {
		t.Errorf("key file is not PEM PKCS#8:\n%s", data)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the key file", len(entries))
	}

	again, created, err := LoadOrCreateKey(dir, failingReader{})
	if err != nil {
		t.Fatal(err)
	}
	if created || again.Kid != key.Kid || !again.Private.Equal(key.Private) {
		t.Errorf("second call: created %v kid %s, want the same key loaded", created, again.Kid)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("no randomness here") }

func TestLoadOrCreateKeyConcurrent(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	var wg sync.WaitGroup
	kids := make([]string, n)
	createdCount := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, created, err := LoadOrCreateKey(dir, rand.Reader)
			kids[i], createdCount[i], errs[i] = k.Kid, created, err
		}()
	}
	wg.Wait()
	created := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if kids[i] != kids[0] {
			t.Errorf("caller %d got kid %s, caller 0 %s", i, kids[i], kids[0])
		}
		if createdCount[i] {
			created++
		}
	}
	if created != 1 {
		t.Errorf("%d callers created the key, want 1", created)
	}
}

func TestKeyFileModes(t *testing.T) {
	for _, mode := range []fs.FileMode{0o640, 0o604, 0o644, 0o660, 0o666, 0o700 | 0o010} {
		dir := t.TempDir()
		path := filepath.Join(dir, SigningKeyFile)
		if err := SaveKeyFile(path, seededKey(t, 1)); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadKeyFile(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("mode %#o: got %v, want a refusal", mode, err)
		}
		if _, _, err := LoadOrCreateKey(dir, rand.Reader); err == nil {
			t.Errorf("mode %#o: LoadOrCreateKey used the file", mode)
		}
	}
	t.Run("0400 is fine", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "k.pem")
		if err := SaveKeyFile(path, seededKey(t, 1)); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o400); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadKeyFile(path); err != nil {
			t.Error(err)
		}
	})
	t.Run("a directory is not a key file", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, SigningKeyFile), 0o700); err != nil {
			t.Fatal(err)
		}
		if _, _, err := LoadOrCreateKey(dir, rand.Reader); err == nil {
			t.Error("used a directory as the key")
		}
	})
}

func TestLoadKeyFileRefuses(t *testing.T) {
	_, ecPriv, _ := ed25519.GenerateKey(rand.Reader)
	der, err := x509.MarshalPKCS8PrivateKey(ecPriv)
	if err != nil {
		t.Fatal(err)
	}
	good := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	pubDER, err := x509.MarshalPKIXPublicKey(ecPriv.Public())
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"empty":             nil,
		"not PEM":           []byte("hello"),
		"wrong block type":  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}),
		"public key":        pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}),
		"garbage DER":       pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1, 2, 3}}),
		"two blocks":        append(append([]byte{}, good...), good...),
		"trailing garbage":  append(append([]byte{}, good...), "junk"...),
		"oversized garbage": bytes.Repeat([]byte("A"), maxKeyFile+10),
	} {
		path := filepath.Join(t.TempDir(), "k.pem")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadKeyFile(path); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	t.Run("missing file says so", func(t *testing.T) {
		_, err := LoadKeyFile(filepath.Join(t.TempDir(), "none.pem"))
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("got %v, want fs.ErrNotExist", err)
		}
	})
}

func TestSaveKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.pem")
	key := seededKey(t, 30)
	if err := SaveKeyFile(path, key); err != nil {
		t.Fatal(err)
	}
	if got := fileMode(t, path); got != 0o600 {
		t.Errorf("mode %#o, want 0600", got)
	}
	if err := SaveKeyFile(path, seededKey(t, 31)); !errors.Is(err, fs.ErrExist) {
		t.Errorf("overwrite: got %v, want fs.ErrExist", err)
	}
	got, err := LoadKeyFile(path)
	if err != nil || got.Kid != key.Kid {
		t.Errorf("after refused overwrite: kid %s err %v, want %s", got.Kid, err, key.Kid)
	}
	if err := SaveKeyFile(filepath.Join(t.TempDir(), "x.pem"), Key{}); !errors.Is(err, ErrBadKey) {
		t.Errorf("zero key: got %v, want %v", err, ErrBadKey)
	}
}

func TestRetiredKeys(t *testing.T) {
	dir := t.TempDir()
	current, _, err := LoadOrCreateKey(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	retiredDir := filepath.Join(dir, RetiredDir)
	if err := os.Mkdir(retiredDir, 0o700); err != nil {
		t.Fatal(err)
	}
	oldPriv := seededKey(t, 40)
	oldPub := seededKey(t, 41)
	if err := SaveKeyFile(filepath.Join(retiredDir, "2026-01.pem"), oldPriv); err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(oldPub.Public().Key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(retiredDir, "2026-02.pem"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	// The current key copied into retired/ is not listed twice; a non-.pem
	// file is not a key.
	if err := SaveKeyFile(filepath.Join(retiredDir, "2026-03.pem"), current); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(retiredDir, "README"), []byte("old keys"), 0o644); err != nil {
		t.Fatal(err)
	}

	set, err := LoadKeySet(dir, current)
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, k := range set.Keys() {
		kids = append(kids, k.Kid)
	}
	if want := []string{current.Kid, oldPriv.Kid, oldPub.Kid}; strings.Join(kids, ",") != strings.Join(want, ",") {
		t.Errorf("kids %v, want %v", kids, want)
	}
	for _, signer := range []Key{current, oldPriv, oldPub} {
		signed, err := Sign(sampleDoc(), signer)
		if err != nil {
			t.Fatal(err)
		}
		if kid, err := Verify(signed, set); err != nil || kid != signer.Kid {
			t.Errorf("signed by %s: kid %s err %v", signer.Kid, kid, err)
		}
	}
	jwks, err := MarshalJWKS(set)
	if err != nil {
		t.Fatal(err)
	}
	if parsed, err := ParseJWKS(jwks); err != nil || len(parsed.Keys()) != 3 {
		t.Errorf("JWKS of the set: %v", err)
	}

	t.Run("a readable retired private key is refused", func(t *testing.T) {
		if err := os.Chmod(filepath.Join(retiredDir, "2026-01.pem"), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(filepath.Join(retiredDir, "2026-01.pem"), 0o600)
		if _, err := LoadRetired(dir); err == nil {
			t.Error("loaded")
		}
	})
	t.Run("a broken retired file is an error, not a silent skip", func(t *testing.T) {
		bad := filepath.Join(retiredDir, "2026-04.pem")
		if err := os.WriteFile(bad, []byte("nope"), 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(bad)
		if _, err := LoadRetired(dir); err == nil {
			t.Error("loaded")
		}
	})
	t.Run("no retired directory means no retired keys", func(t *testing.T) {
		keys, err := LoadRetired(t.TempDir())
		if err != nil || len(keys) != 0 {
			t.Errorf("keys %v err %v", keys, err)
		}
	})
}

func TestLoadOrCreateSecret(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	want := bytes.Repeat([]byte{7}, MemoKeySize)
	got, err := LoadOrCreateSecret(dir, MemoKeyFile, MemoKeySize, bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("secret %x, want the injected bytes", got)
	}
	path := filepath.Join(dir, MemoKeyFile)
	if m := fileMode(t, path); m != 0o600 {
		t.Errorf("mode %#o, want 0600", m)
	}
	again, err := LoadOrCreateSecret(dir, MemoKeyFile, MemoKeySize, failingReader{})
	if err != nil || !bytes.Equal(again, want) {
		t.Errorf("reload: %x %v", again, err)
	}

	t.Run("wrong length is refused", func(t *testing.T) {
		if _, err := LoadOrCreateSecret(dir, MemoKeyFile, 64, rand.Reader); err == nil {
			t.Error("loaded a 32-byte secret as 64 bytes")
		}
	})
	t.Run("group-readable is refused", func(t *testing.T) {
		if err := os.Chmod(path, 0o640); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(path, 0o600)
		if _, err := LoadOrCreateSecret(dir, MemoKeyFile, MemoKeySize, rand.Reader); err == nil {
			t.Error("loaded")
		}
	})
	t.Run("names and sizes", func(t *testing.T) {
		for _, name := range []string{"", ".", "..", "../x", "a/b", `a\b`} {
			if _, err := LoadOrCreateSecret(dir, name, MemoKeySize, rand.Reader); err == nil {
				t.Errorf("name %q accepted", name)
			}
		}
		for _, n := range []int{0, 15, maxKeyFile + 1} {
			if _, err := LoadOrCreateSecret(dir, "other", n, rand.Reader); err == nil {
				t.Errorf("size %d accepted", n)
			}
		}
	})
	t.Run("a short random source fails and writes nothing", func(t *testing.T) {
		d := t.TempDir()
		if _, err := LoadOrCreateSecret(d, MemoKeyFile, MemoKeySize, bytes.NewReader([]byte{1, 2})); err == nil {
			t.Error("created from 2 bytes")
		}
		if entries, _ := os.ReadDir(d); len(entries) != 0 {
			t.Errorf("left %d files", len(entries))
		}
	})
}
