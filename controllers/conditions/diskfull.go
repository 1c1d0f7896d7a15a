package conditions

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
)

// ReasonDiskFull is SessionConnected=False while the bridge keeps its link
// down because its volume's free space is below DISK_RESERVE: it neither
// receives nor accepts sends (507) until space is freed, then resumes by
// itself. Its own reason, so that the event on the resource says what to do.
const ReasonDiskFull = "DiskFull"

// diskFull is SessionConnected for a bridge that reports disk_full; ok is
// false for any other state.
func diskFull(c metav1.Condition, s *bridgeclient.State) (metav1.Condition, bool) {
	if s.Reason != contract.ReasonDiskFull {
		return c, false
	}
	return with(c, metav1.ConditionFalse, ReasonDiskFull,
		"the bridge's volume is below its free-space reserve (DISK_RESERVE): it does not receive and refuses sends until space is freed or the volume grows"), true
}
