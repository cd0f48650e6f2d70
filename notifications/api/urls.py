from django.urls import path

from notifications.api import devices, views

urlpatterns = [
    path("me/notifications", views.NotificationsApi.as_view(), name="me-notifications"),
    path(
        "me/notifications/read", views.NotificationsReadApi.as_view(), name="me-notifications-read"
    ),
    path("me/devices", devices.DevicesApi.as_view(), name="me-devices"),
    path("me/devices/<uuid:device_id>", devices.DeviceApi.as_view(), name="me-device"),
    path("push/config", devices.PushConfigApi.as_view(), name="push-config"),
]
