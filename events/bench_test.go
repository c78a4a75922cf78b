package events

import "testing"

func BenchmarkEmit(b *testing.B) {
	for _, stuck := range []int{0, 1} {
		b.Run(map[int]string{0: "no subscriber", 1: "one stuck subscriber"}[stuck], func(b *testing.B) {
			bus := NewBus(nil)
			defer bus.Close()
			for range stuck {
				defer bus.Subscribe(SubscribeOptions{}).Close()
			}
			e := StateChanged{Header: Header{Server: "fs"}, From: "starting", To: "ready"}
			b.ReportAllocs()
			for b.Loop() {
				bus.Emit(e)
			}
		})
	}
}
