from django.urls import path

from accounts.api.views import LogoutApi, MeApi, RegisterApi, TokenApi

urlpatterns = [
    path("auth/register", RegisterApi.as_view(), name="auth-register"),
    path("auth/token", TokenApi.as_view(), name="auth-token"),
    path("auth/logout", LogoutApi.as_view(), name="auth-logout"),
    path("me", MeApi.as_view(), name="me"),
]
