package sqlcore

import (
	"testing"
	"testing/fstest"
)

func TestLoadMigrationsOrdersByVersion(t *testing.T) {
	fsys := fstest.MapFS{
		"m/0010_later.sql": {Data: []byte("B")},
		"m/0002_first.sql": {Data: []byte("A")},
		"m/README.md":      {Data: []byte("not a migration")},
	}
	ms, err := LoadMigrations(fsys, "m")
	if err != nil {
		t.Fatalf("LoadMigrations: %v", err)
	}
	if len(ms) != 2 || ms[0].Version != 2 || ms[0].Name != "0002_first" || ms[1].Version != 10 || ms[1].SQL != "B" {
		t.Errorf("got %+v, want 0002_first then 0010_later", ms)
	}
}

func TestLoadMigrationsRefusesBadNames(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"no number": {"m/init.sql": {}},
		"zero":      {"m/0000_init.sql": {}},
		"duplicate": {"m/0001_a.sql": {}, "m/1_b.sql": {}},
	} {
		if _, err := LoadMigrations(fsys, "m"); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
