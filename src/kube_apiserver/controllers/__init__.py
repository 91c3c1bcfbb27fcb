"""Embedded controllers, as kube-controller-manager runs them: the garbage collector (owner references,
orphan and foreground deletion) and the namespace controller (emptying a deleted namespace)."""
