from django.urls import path

from chips.api import (
    error_codes,  # noqa: F401  (the operations' error codes, for the schema)
    views,
)

urlpatterns = [
    path("me/wallet", views.WalletApi.as_view(), name="me-wallet"),
    path("me/wallet/entries", views.WalletEntriesApi.as_view(), name="me-wallet-entries"),
    path("me/wallet/daily", views.DailyBonusApi.as_view(), name="me-wallet-daily"),
    path("wallets/<str:username>", views.StaffWalletApi.as_view(), name="wallet"),
    path("house", views.HouseApi.as_view(), name="house"),
    path(
        "wallets/<str:username>/adjustments",
        views.StaffAdjustmentApi.as_view(),
        name="wallet-adjustments",
    ),
]
