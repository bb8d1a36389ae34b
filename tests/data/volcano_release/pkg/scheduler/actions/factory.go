package actions

import (
	"volcano.sh/volcano/pkg/scheduler/actions/allocate"
	"volcano.sh/volcano/pkg/scheduler/actions/gangpreempt"
	"volcano.sh/volcano/pkg/scheduler/actions/shuffle"
	"volcano.sh/volcano/pkg/scheduler/framework"
)

func init() {
	framework.RegisterAction(allocate.New())
	framework.RegisterAction(shuffle.New())
	framework.RegisterAction(gangpreempt.New())
	// framework.RegisterAction(retired.New())
}
