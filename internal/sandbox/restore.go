package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// restoreInto puts a prepared mariabackup copy into node n's empty data
// directory with the Galera position the copy holds, safe to bootstrap:
// the cluster goes on from that state (same UUID, same seqno), so the
// other nodes join by state transfer from it.
func (sb *Sandbox) restoreInto(ctx context.Context, n Node) error {
	dir := sb.fromBackup
	uuid, seqno, err := backupPosition(dir)
	if err != nil {
		return err
	}
	sb.ctl.Progress(n.Name, fmt.Sprintf("restoring %s (position %s:%d)", dir, uuid, seqno))
	tool := "mariadb-backup"
	if _, err := exec.LookPath(tool); err != nil {
		tool = "mariabackup"
	}
	cmd := exec.CommandContext(ctx, tool, "--copy-back", "--target-dir="+dir, "--datadir="+sb.dataDir(n))
	if out, err := cmd.CombinedOutput(); err != nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		return fmt.Errorf("%s: mariabackup --copy-back from %s failed (%v): %s", n.Name, dir, err, strings.Join(lines[max(0, len(lines)-5):], " | "))
	}
	state := fmt.Sprintf("# GALERA saved state\nversion: 2.1\nuuid:    %s\nseqno:   %d\nsafe_to_bootstrap: 1\n", uuid, seqno)
	if err := os.WriteFile(sb.grastate(n), []byte(state), 0o640); err != nil {
		return err
	}
	return chownMysqlTree(sb.nodeDir(n))
}

// backupPosition reads the Galera position a prepared copy holds
// (mariabackup --galera-info).
func backupPosition(dir string) (string, int64, error) {
	var raw []byte
	var err error
	for _, name := range []string{"mariadb_backup_galera_info", "xtrabackup_galera_info"} {
		if raw, err = os.ReadFile(filepath.Join(dir, name)); err == nil {
			break
		}
	}
	if err != nil {
		return "", 0, fmt.Errorf("%s holds no Galera position (a copy made with mariabackup --galera-info, e.g. by galeon cluster backup): %w", dir, err)
	}
	f := strings.Fields(string(raw))
	if len(f) > 0 {
		if uuid, s, ok := strings.Cut(f[0], ":"); ok && len(uuid) == 36 {
			if seqno, err := strconv.ParseInt(s, 10, 64); err == nil {
				return uuid, seqno, nil
			}
		}
	}
	return "", 0, fmt.Errorf("%s: Galera position %q: want uuid:seqno", dir, strings.TrimSpace(string(raw)))
}
