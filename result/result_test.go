package result

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLoadRejectsOtherFiles(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"garbage": "{nope", "other": `{"schema":"fio"}`} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := Load(p); err == nil {
			t.Errorf("%s loaded as a result", name)
		}
	}
}
