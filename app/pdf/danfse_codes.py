"""The official descriptions of the NFS-e Nacional's domain codes, as the DANFSe v2.0 prints them
(tpEmit, ambGer, cStat, finNFSe, tribISSQN, tpRetISSQN, opSimpNac, regApTribSN, regEspTrib,
tpImunidade, tpSusp, tpBM, tpRetPisCofins)."""

from __future__ import annotations

EMITTER_TYPES = {"1": "Prestador", "2": "Tomador", "3": "Intermediário"}
GENERATORS = {"1": "Sistema Próprio do Município", "2": "Sefin Nacional NFS-e"}
ENVIRONMENTS = {"1": "Produção", "2": "Produção Restrita"}
STATUSES = {
    "100": "NFS-e Gerada",
    "101": "NFS-e de Substituição Gerada",
    "102": "NFS-e de Decisão Judicial",
    "103": "NFS-e Avulsa Gerada",
    "107": "NFS-e MEI Gerada",
}
PURPOSES = {"0": "NFS-e regular", "1": "NFS-e de crédito", "2": "NFS-e de débito"}
ISSQN_TAXATION = {
    "1": "Operação Tributável",
    "2": "Exportação de Serviço",
    "3": "Não Incidência",
    "4": "Imunidade",
}
ISSQN_RETENTION = {"1": "Não Retido", "2": "Retido pelo Tomador", "3": "Retido pelo Intermediário"}
SIMPLES = {
    "1": "Não Optante",
    "2": "Optante - Microempreendedor Individual (MEI)",
    "3": "Optante - Microempresa ou Empresa de Pequeno Porte (ME/EPP)",
}
SIMPLES_REGIME = {
    "1": "Regime de apuração dos tributos federais e municipal pelo Simples Nacional",
    "2": "Regime de apuração dos tributos federais pelo SN e o ISSQN pela NFS-e conforme legislação municipal",
    "3": "Regime de apuração dos tributos federais e municipal pela NFS-e conforme legislações de cada tributo",
}
SPECIAL_REGIMES = {
    "0": "Nenhum",
    "1": "Ato Cooperado (Cooperativa)",
    "2": "Estimativa",
    "3": "Microempresa Municipal",
    "4": "Notário ou Registrador",
    "5": "Profissional Autônomo",
    "6": "Sociedade de Profissionais",
    "9": "Outros",
}
IMMUNITIES = {
    "0": "Imunidade (tipo não informado)",
    "1": "Patrimônio, renda ou serviços uns dos outros (CF88, art. 150, VI, a)",
    "2": "Templos de qualquer culto (CF88, art. 150, VI, b)",
    "3": "Partidos políticos, sindicatos, educação e assistência social (CF88, art. 150, VI, c)",
    "4": "Livros, jornais, periódicos e o papel destinado a sua impressão (CF88, art. 150, VI, d)",
    "5": "Fonogramas e videofonogramas musicais produzidos no Brasil (CF88, art. 150, VI, e)",
}
SUSPENSIONS = {"1": "Decisão Judicial", "2": "Processo Administrativo"}
BENEFITS = {"1": "Isenção", "2": "Redução da BC em %", "3": "Redução da BC em R$", "4": "Alíquota Diferenciada"}
PIS_COFINS_RETENTION = {
    "0": "PIS/COFINS/CSLL Não Retidos",
    "1": "PIS/COFINS Retidos",
    "2": "PIS/COFINS Não Retidos",
    "3": "PIS/COFINS/CSLL Retidos",
    "4": "PIS/COFINS Retidos, CSLL Não Retido",
    "5": "PIS Retido, COFINS/CSLL Não Retidos",
    "6": "COFINS Retido, PIS/CSLL Não Retidos",
    "7": "PIS Não Retido, COFINS/CSLL Retidos",
    "8": "PIS/COFINS Não Retidos, CSLL Retido",
    "9": "COFINS Não Retido, PIS/CSLL Retidos",
}
