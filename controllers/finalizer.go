package controllers

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
)

// LogoutFinalizer holds a MessagingBridge with logoutOnDelete until its
// bridge was asked to log out, for at most LogoutDeadline.
const LogoutFinalizer = "msgbridge.io/logout"

// LogoutDeadline bounds how long a deletion waits for the logout, counted
// from the deletion timestamp: a broken bridge must not block deletion.
const LogoutDeadline = 30 * time.Second

// logoutTimeout bounds the logout call itself within the deadline.
const logoutTimeout = 10 * time.Second

// reconcileFinalizer adds the logout finalizer when spec.logoutOnDelete is
// set, and removes it when it is unset.
func (r *MessagingBridgeReconciler) reconcileFinalizer(ctx context.Context, mb *msgbridgev1alpha1.MessagingBridge) error {
	if mb.Spec.LogoutOnDelete == controllerutil.ContainsFinalizer(mb, LogoutFinalizer) {
		return nil
	}
	patch := client.MergeFromWithOptions(mb.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if mb.Spec.LogoutOnDelete {
		controllerutil.AddFinalizer(mb, LogoutFinalizer)
	} else {
		controllerutil.RemoveFinalizer(mb, LogoutFinalizer)
	}
	return r.Patch(ctx, mb, patch, client.FieldOwner(FieldOwner))
}

// finalize logs the bridge out, best effort, then lets the deletion go on:
// one attempt, bounded by what is left of LogoutDeadline. Whether it worked
// is reported as an event; the finalizer goes either way.
func (r *MessagingBridgeReconciler) finalize(ctx context.Context, mb *msgbridgev1alpha1.MessagingBridge) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(mb, LogoutFinalizer) {
		return ctrl.Result{}, nil
	}
	left := mb.DeletionTimestamp.Add(LogoutDeadline).Sub(r.now())
	switch {
	case mb.Spec.Suspend:
		r.event(mb, corev1.EventTypeWarning, "LogoutSkipped", "Logout", "the bridge is suspended: no process runs to log out")
	case left <= 0:
		r.event(mb, corev1.EventTypeWarning, "LogoutSkipped", "Logout", "the logout deadline passed before the bridge could be asked")
	default:
		if err := r.logout(ctx, mb, min(left, logoutTimeout)); err != nil {
			r.event(mb, corev1.EventTypeWarning, "LogoutFailed", "Logout", "logging the bridge out: "+err.Error())
		} else {
			r.event(mb, corev1.EventTypeNormal, "LoggedOut", "Logout", "the WhatsApp account was logged out")
		}
	}
	patch := client.MergeFrom(mb.DeepCopy())
	controllerutil.RemoveFinalizer(mb, LogoutFinalizer)
	if err := r.Patch(ctx, mb, patch, client.FieldOwner(FieldOwner)); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	forgetMetrics(mb.Namespace, mb.Name)
	return ctrl.Result{}, nil
}

func (r *MessagingBridgeReconciler) logout(ctx context.Context, mb *msgbridgev1alpha1.MessagingBridge, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	token, err := r.adminToken(ctx, mb)
	if err != nil {
		return err
	}
	return r.bridge().Logout(ctx, r.bridgeURL(mb), token)
}
