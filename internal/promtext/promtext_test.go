package promtext

import (
	"math"
	"strings"
	"testing"
)

func TestTheExpositionIsPrometheusText(t *testing.T) {
	var b strings.Builder
	err := Write(&b, []Family{
		{Name: "wave_b", Help: "second", Type: Counter, Samples: []Sample{{Value: 3}}},
		{Name: "wave_empty", Help: "no samples: left out", Type: Gauge},
		{Name: "wave_a", Help: "first\\line\nnext", Type: Gauge, Samples: []Sample{
			{Labels: L("z", "1", "lane", `we"ird\name`+"\n"), Value: 0.25},
			{Labels: L("lane", "main"), Value: math.Inf(1)},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `# HELP wave_a first\\line\nnext
# TYPE wave_a gauge
wave_a{lane="we\"ird\\name\n",z="1"} 0.25
wave_a{lane="main"} +Inf
# HELP wave_b second
# TYPE wave_b counter
wave_b 3
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
