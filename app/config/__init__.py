"""Configuration: the national services' endpoints and the user-editable settings file."""

from app.config.endpoints import Service, SoapBinding
from app.config.settings import Endpoint, Settings, SettingsError, load_settings, save_settings

__all__ = [
    "Endpoint",
    "Service",
    "Settings",
    "SettingsError",
    "SoapBinding",
    "load_settings",
    "save_settings",
]
