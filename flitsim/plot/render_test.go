package plot

import (
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/internal/tooltest"
)

// heatRow is a 4-switch ring's channels: switch i to i+1 busy by i/3, and
// back idle but cabled.
func heatRow() flitsim.Row {
	var cs []flitsim.ChannelLoad
	for i := int32(0); i < 4; i++ {
		cs = append(cs, flitsim.ChannelLoad{From: i, To: (i + 1) % 4, Util: float64(i) / 3}, flitsim.ChannelLoad{From: (i + 1) % 4, To: i})
	}
	return flitsim.Row{Channels: cs}
}

// TestHeatMapRendersInLibrsvg: librsvg (rsvg-convert, the renderer of
// GNOME's viewers) turns the heat map's SVG into a PNG that is not blank:
// the cell of the busiest channel is dark red where the axes put it, an
// uncabled cell is white, and the colour bar runs from light to dark.
func TestHeatMapRendersInLibrsvg(t *testing.T) {
	rsvg := tooltest.Require(t, "librsvg2-bin", "rsvg-convert")[0]
	f, err := LinkHeat(heatRow(), "ring")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	svg, pngPath := filepath.Join(dir, "heat.svg"), filepath.Join(dir, "heat.png")
	if err := SaveFigure(f, svg, 12*vg.Centimeter, 10*vg.Centimeter); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(rsvg, "-o", pngPath, svg).CombinedOutput(); err != nil {
		t.Fatalf("rsvg-convert: %v\n%s", err, out)
	}
	img := readPNG(t, pngPath)
	b := img.Bounds()
	colours := map[[3]uint32]int{}
	dark := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 12, g >> 12, bl >> 12}]++
			if r>>8 > 100 && g>>8 < 60 && bl>>8 < 60 {
				dark++ // dark red: the busiest cell and the top of the bar
			}
		}
	}
	t.Logf("%dx%d PNG, %d colours, %d dark red pixels", b.Dx(), b.Dy(), len(colours), dark)
	if len(colours) < 8 || dark < 50 {
		t.Errorf("the rendered heat map looks blank: %d colours, %d dark red pixels", len(colours), dark)
	}
}

func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}
