"""The certificate controllers of kube-controller-manager (pkg/controller/certificates): csrsigning,
csrapproving and csrcleaner."""
