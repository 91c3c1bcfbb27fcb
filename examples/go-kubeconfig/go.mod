module example.com/kubeconfigtest

go 1.19
