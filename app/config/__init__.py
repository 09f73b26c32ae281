"""Configuration: the national services' endpoints and the user-editable settings file."""

from app.config.endpoints import Environment, Product, Service, SoapBinding
from app.config.settings import Endpoint, Settings, SettingsError, load_settings, save_settings

__all__ = [
    "Endpoint",
    "Environment",
    "Product",
    "Service",
    "Settings",
    "SettingsError",
    "SoapBinding",
    "load_settings",
    "save_settings",
]
